/* Built against an installed cvm-lite, shared and static: prints each plugin the
 * library found by itself (no CVML_PLUGIN_PATH) and exits 0 when one of them lies in
 * the directory given as argv[1] (the install's lib/cvml/plugins), loaded or refused
 * for a reason other than not being found (no GPU, no driver). */
#include <stdio.h>
#include <string.h>

#include "cvml.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: plugin_probe PLUGIN_DIR\n");
        return 64;
    }
    if (cvml_init()) {
        fprintf(stderr, "plugin_probe: %s\n", cvml_last_error());
        return 2;
    }
    int count = 0, found = 0;
    cvml_plugin_count(&count);
    for (int i = 0; i < count; ++i) {
        const char *name = "", *version = "", *path = "", *reason = "";
        int loaded = 0;
        if (cvml_plugin_info(i, &name, &version, &path, &loaded, &reason)) continue;
        printf("%s %s %s%s%s\n", name, loaded ? "loaded" : "not loaded", path,
               reason[0] ? ": " : "", reason);
        if (path && strncmp(path, argv[1], strlen(argv[1])) == 0) found = 1;
    }
    cvml_release();
    if (!found) fprintf(stderr, "plugin_probe: no plugin found in %s\n", argv[1]);
    return found ? 0 : 1;
}
