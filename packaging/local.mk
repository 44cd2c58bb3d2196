# packaging/: what `make install` puts beside the binary (docs/operations.md,
# "Installing"):
#   $(sysconfdir)/searchsync/searchsync.ini        the sample configuration,
#                                                  only if none is there yet
#   $(systemdsystemunitdir)/searchsync.service     the systemd unit, with
#                                                  this install's paths
#   $(systemdsystemunitdir)/searchsync@.service    its template, one instance
#                                                  per source (NAME.ini)
#   $(systemdsystemunitdir)/searchsync-sources.path and .service
#                                                  the sources added at run time
#                                                  started: the path unit watches
#                                                  $(sysconfdir)/searchsync, the
#                                                  oneshot runs
#   $(libexecdir)/searchsync/searchsync-sources    which starts, restarts or stops
#                                                  searchsync@NAME to match it
#   $(man1dir)/searchsync.1                        the man page
#   $(bashcompletiondir)/searchsync                bash completion
# Both directories may be set at configure time
# (--with-systemdsystemunitdir, --with-bashcompletiondir) or on make's
# command line; their defaults stay under $(prefix), so distcheck's
# unprivileged install works.
dist_man1_MANS = docs/searchsync.1

systemdsystemunit_DATA = packaging/searchsync.service packaging/searchsync@.service \
	packaging/searchsync-sources.path packaging/searchsync-sources.service
bashcompletion_DATA = packaging/searchsync
searchsynclibexecdir = $(libexecdir)/searchsync
searchsynclibexec_SCRIPTS = packaging/searchsync-sources
CLEANFILES += packaging/searchsync.service packaging/searchsync@.service packaging/searchsync \
	packaging/searchsync-sources.path packaging/searchsync-sources.service \
	packaging/searchsync-sources
EXTRA_DIST += packaging/searchsync.service.in packaging/searchsync@.service.in \
	packaging/searchsync.bash packaging/searchsync-sources.path.in \
	packaging/searchsync-sources.service.in packaging/searchsync-sources.sh

# paths substituted at make time, so `make install prefix=...` is honoured
packaging/searchsync.service: $(srcdir)/packaging/searchsync.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) packaging && \
	sed -e 's|@bindir[@]|$(bindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	    $(srcdir)/packaging/searchsync.service.in >$@.tmp && mv $@.tmp $@
packaging/searchsync@.service: $(srcdir)/packaging/searchsync@.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) packaging && \
	sed -e 's|@bindir[@]|$(bindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	    $(srcdir)/packaging/searchsync@.service.in >$@.tmp && mv $@.tmp $@
packaging/searchsync-sources.path: $(srcdir)/packaging/searchsync-sources.path.in Makefile
	$(AM_V_GEN)$(MKDIR_P) packaging && \
	sed -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	    $(srcdir)/packaging/searchsync-sources.path.in >$@.tmp && mv $@.tmp $@
packaging/searchsync-sources.service: $(srcdir)/packaging/searchsync-sources.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) packaging && \
	sed -e 's|@libexecdir[@]|$(libexecdir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	    $(srcdir)/packaging/searchsync-sources.service.in >$@.tmp && mv $@.tmp $@
packaging/searchsync-sources: $(srcdir)/packaging/searchsync-sources.sh
	$(AM_V_GEN)$(MKDIR_P) packaging && cp $(srcdir)/packaging/searchsync-sources.sh $@ && \
	chmod +x $@
packaging/searchsync: $(srcdir)/packaging/searchsync.bash
	$(AM_V_GEN)$(MKDIR_P) packaging && cp $(srcdir)/packaging/searchsync.bash $@

# the sample configuration: never over an administrator's file (an upgrade
# keeps it); uninstall removes it only if it is still the sample
searchsyncconfdir = $(sysconfdir)/searchsync
install-data-local:
	$(MKDIR_P) '$(DESTDIR)$(searchsyncconfdir)'
	@if test -f '$(DESTDIR)$(searchsyncconfdir)/searchsync.ini'; then \
	  echo "keeping $(DESTDIR)$(searchsyncconfdir)/searchsync.ini (the sample is $(docdir)/searchsync.ini)"; \
	else \
	  echo " $(INSTALL_DATA) $(srcdir)/searchsync.ini '$(DESTDIR)$(searchsyncconfdir)/searchsync.ini'"; \
	  $(INSTALL_DATA) $(srcdir)/searchsync.ini '$(DESTDIR)$(searchsyncconfdir)/searchsync.ini'; \
	fi
uninstall-local:
	@f='$(DESTDIR)$(searchsyncconfdir)/searchsync.ini'; \
	if test -f "$$f" && cmp -s "$$f" $(srcdir)/searchsync.ini; then \
	  echo " rm -f $$f"; rm -f "$$f"; \
	  rmdir '$(DESTDIR)$(searchsyncconfdir)' 2>/dev/null || true; \
	fi
