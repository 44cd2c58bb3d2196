# bash completion for searchsync (installed by make install into
# $(datadir)/bash-completion/completions/searchsync).
_searchsync() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion || return
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
        prev="${COMP_WORDS[COMP_CWORD-1]}"
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi
    local commands="run tail kafka-tail reindex resync delayed-run check mapping status epoch dead-letters source migrate config"
    if [ "$cword" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    case "$prev" in
        --config|-c|--password-file|--ssl-ca)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
    esac
    local sub="${words[1]}" extra=""
    case "$sub" in
        mapping) [ "$cword" -eq 2 ] && extra="import export body" ;;
        config) [ "$cword" -eq 2 ] && extra="check reference" ;;
        epoch) [ "$cword" -eq 2 ] && extra="bump" ;;
        dead-letters) [ "$cword" -eq 2 ] && extra="list replay" ;;
        source) [ "$cword" -eq 2 ] && extra="list add edit remove" ;;
    esac
    COMPREPLY=($(compgen -W "$extra --config --help" -- "$cur"))
    case "$cur" in
        -*) ;;
        *) [ -z "$extra" ] || [ "$cword" -gt 2 ] && COMPREPLY+=($(compgen -f -- "$cur")) ;;
    esac
}
complete -F _searchsync searchsync
