/* The plugin loader (compiled only with CVML_WITH_PLUGINS): opens shared libraries
 * that speak the plugin ABI (api/cvml_plugin.h) and keeps a record of every plugin it
 * loaded or could not load, with the reason. Callers hold the library's init lock. */
#pragma once

#include <stdint.h>

typedef struct plugin_record {
    const char* name;    /* the plugin's declared name, or the file name */
    const char* version; /* "" when unknown */
    const char* path;    /* "" when not found */
    int loaded;          /* 1: its entry succeeded and its registrations stand */
    const char* reason;  /* "" when loaded, why not otherwise */
} plugin_record;

/* At cvml_init: every plugin in CVML_PLUGIN_PATH, then in the library's plugin
 * directories. Failures are recorded, never returned: the CPU still works. */
void plugin_loader_init(void);
/* At the last cvml_release: unregisters every plugin's devices, operators and
 * serializers (devices' release() is called), closes the libraries, forgets all. */
void plugin_loader_release(void);
/* Loads one plugin by path. Loading a plugin already loaded (same file, or same
 * declared name) is a no-op. A failure is recorded and returned with a message. */
int plugin_load(const char* path);
int32_t plugin_count(void);
int plugin_at(int32_t index, plugin_record* out);
