/* replay: runs every file of the fuzz corpus through the fuzz target once,
 * without libFuzzer, so `make check` (plain and ASan/UBSan) keeps the corpus
 * passing. Corpus: $SEARCHSYNC_SRCDIR/tests/fuzz/corpus or argv[1]. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
    char dir[4096];
    const char *src = getenv("SEARCHSYNC_SRCDIR");
    if (argc > 1) snprintf(dir, sizeof dir, "%s", argv[1]);
    else snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus", src ? src : ".");
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open %s\n", dir);
        return 1;
    }
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        fseek(f, 0, SEEK_END);
        long sz = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *buf = malloc(sz > 0 ? (size_t)sz : 1);
        size_t got = fread(buf, 1, (size_t)(sz > 0 ? sz : 0), f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, got);
        free(buf);
        n++;
    }
    closedir(d);
    printf("replayed %d corpus files from %s\n", n, dir);
    return n > 0 ? 0 : 1;
}
