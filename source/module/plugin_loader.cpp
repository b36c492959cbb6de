/* The plugin loader: dlopen (LoadLibrary on Windows), the ABI check before any plugin
 * code runs, the host table, and the record of what was loaded and why not. */
#include "module/plugin_loader.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvml_plugin.h"
#include "module/device.h"
#include "module/plan/fusion.h"
#include "module/plan/memory_plan.h"
#include "module/plan/order.h"
#include "module/plugin_ir.h"
#include "module/serializer.h"
#include "utility/error.h"
#include "utility/memory.h"
#include "utility/sort.h"
#include "utility/platform.h"

#ifdef _WIN32
#include <windows.h>
#define PATH_SEP ';'
#define DIR_SEP '\\'
#define PLUGIN_PREFIX "cvml_"
#define PLUGIN_SUFFIX ".dll"
#else
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>
#if defined(__GLIBC__)
#include <link.h> /* dladdr1 and the ELF symbol, to check the declaration's size */
#endif
#define PATH_SEP ':'
#define DIR_SEP '/'
#define PLUGIN_PREFIX "libcvml_"
#define PLUGIN_SUFFIX ".so"
#endif

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#ifndef CVML_PLUGIN_INSTALL_DIR
#define CVML_PLUGIN_INSTALL_DIR ""
#endif
/* The install's plugin directory relative to its bin directory (CMake passes it). */
#ifndef CVML_PLUGIN_DIR_FROM_BINDIR
#define CVML_PLUGIN_DIR_FROM_BINDIR "../lib/cvml/plugins"
#endif
/* Plugins this build of the library comes with (the CUDA plugin when CMake built it),
 * comma-separated: one that is found nowhere is listed as absent with the reason. */
#ifndef CVML_EXPECTED_PLUGINS
#define CVML_EXPECTED_PLUGINS ""
#endif

namespace {

constexpr int32_t kMaxPlugins = 32;
constexpr int32_t kMaxItems = 64; /* devices + serializers per plugin */

enum item_kind { ITEM_DEVICE, ITEM_SERIALIZER };

struct plugin_item {
    item_kind kind;
    const void* ptr;
};

struct plugin_slot {
    char name[64];
    char version[32];
    char path[PATH_MAX];
    char dir[PATH_MAX];
    char reason[512];
    int loaded;
    void* handle;
    plugin_item items[kMaxItems];
    int32_t item_count;
    /* The table its entry got; a device may keep it and call fail() while it runs. */
    cvml_host_api host;
};

plugin_slot* g_slots[kMaxPlugins];
int32_t g_slot_count;
plugin_slot* g_current; /* the plugin whose entry is running */

/* ---- the operating system ---------------------------------------------------------- */

/* Whether a plugin's declaration is compatible with this library's ABI (api/cvml_plugin.h:
 * the same major version, any minor), read before any of the plugin's code runs. Only
 * the first two fields are read before that is known. */
bool header_acceptable(const cvml_plugin_header* hd) {
    return CVML_PLUGIN_ABI_MAJOR_OF(hd->abi_version) == CVML_PLUGIN_ABI_MAJOR &&
           hd->struct_size >= sizeof(cvml_plugin_header);
}

#ifdef _WIN32
/* LoadLibrary runs the DLL's DllMain (and its static constructors) at once, before the
 * loader could read the declaration. So the DLL is first mapped inert
 * (DONT_RESOLVE_DLL_REFERENCES: no DllMain, no imports resolved), its declaration read;
 * only a DLL that passes is unmapped and loaded for real. One that fails stays inert
 * until the caller reads the same refusal from it and closes it. */
void* os_open(const char* path) {
    HMODULE inert = LoadLibraryExA(path, nullptr, DONT_RESOLVE_DLL_REFERENCES);
    if (!inert) return nullptr;
    const cvml_plugin_header* hd = reinterpret_cast<const cvml_plugin_header*>(
        reinterpret_cast<void*>(GetProcAddress(inert, CVML_PLUGIN_HEADER_SYMBOL)));
    if (!hd || !header_acceptable(hd)) return reinterpret_cast<void*>(inert);
    FreeLibrary(inert);
    return reinterpret_cast<void*>(LoadLibraryA(path));
}
void* os_symbol(void* h, const char* name) {
    return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(h), name));
}
void os_close(void* h) {
    FreeLibrary(static_cast<HMODULE>(h));
}
const char* os_error(void) {
    static thread_local char buf[64];
    snprintf(buf, sizeof buf, "Windows error %lu", static_cast<unsigned long>(GetLastError()));
    return buf;
}
bool os_realpath(const char* path, char* out) {
    DWORD n = GetFullPathNameA(path, PATH_MAX, out, nullptr);
    return n > 0 && n < PATH_MAX && GetFileAttributesA(out) != INVALID_FILE_ATTRIBUTES;
}
bool os_is_dir(const char* path) {
    DWORD a = GetFileAttributesA(path);
    return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
}
bool os_is_regular(const char* path) {
    DWORD a = GetFileAttributesA(path);
    return a != INVALID_FILE_ATTRIBUTES &&
           !(a & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_DEVICE));
}
/* Windows exports carry no size: only the address is checked. */
bool os_data_symbol_size(const void* addr, size_t* size) {
    (void)addr;
    *size = SIZE_MAX;
    return true;
}
#else
void* os_open(const char* path) {
    // RTLD_LOCAL: a plugin's symbols (a static CUDA runtime) never leak into others.
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}
void* os_symbol(void* h, const char* name) {
    return dlsym(h, name);
}
void os_close(void* h) {
    dlclose(h);
}
const char* os_error(void) {
    const char* e = dlerror();
    return e ? e : "unknown dlopen error";
}
bool os_realpath(const char* path, char* out) {
    return realpath(path, out) != nullptr;
}
bool os_is_dir(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
/* Only regular files are opened: dlopen of a FIFO blocks until a writer comes (for
 * ever, in a plugin directory), and a device or directory is never a plugin. */
bool os_is_regular(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
/* The size of the declaration at `addr` from the plugin's symbol table; false when it
 * is not a data object (a function, say). Where the C library cannot tell, SIZE_MAX. */
bool os_data_symbol_size(const void* addr, size_t* size) {
#if defined(__GLIBC__)
    Dl_info info;
    void* entry = nullptr;
    if (!dladdr1(addr, &info, &entry, RTLD_DL_SYMENT) || !entry || !info.dli_sname ||
        strcmp(info.dli_sname, CVML_PLUGIN_HEADER_SYMBOL) != 0) {
        *size = SIZE_MAX;
        return true;
    }
    const ElfW(Sym)* sym = static_cast<const ElfW(Sym)*>(entry);
    int type = ELF64_ST_TYPE(sym->st_info);
    *size = static_cast<size_t>(sym->st_size);
    return type == STT_OBJECT || type == STT_COMMON;
#else
    (void)addr;
    *size = SIZE_MAX;
    return true;
#endif
}
#endif

const char* base_name(const char* path) {
    const char* b = path;
    for (const char* p = path; *p; ++p)
        if (*p == '/' || *p == '\\') b = p + 1;
    return b;
}

void dir_name(const char* path, char* out, size_t cap) {
    cvml_strlcpy(out, path, cap);
    char* slash = nullptr;
    for (char* p = out; *p; ++p)
        if (*p == '/' || *p == '\\') slash = p;
    if (slash)
        *slash = '\0';
    else
        cvml_strlcpy(out, ".", cap);
}

bool is_plugin_file_name(const char* name) {
    size_t n = strlen(name), pre = strlen(PLUGIN_PREFIX), suf = strlen(PLUGIN_SUFFIX);
    return n > pre + suf && strncmp(name, PLUGIN_PREFIX, pre) == 0 &&
           strcmp(name + n - suf, PLUGIN_SUFFIX) == 0;
}

/* ---- records ------------------------------------------------------------------------ */

plugin_slot* find_by_path(const char* path) {
    for (int32_t i = 0; i < g_slot_count; ++i)
        if (strcmp(g_slots[i]->path, path) == 0) return g_slots[i];
    return nullptr;
}

plugin_slot* find_loaded_by_name(const char* name) {
    for (int32_t i = 0; i < g_slot_count; ++i)
        if (g_slots[i]->loaded && strcmp(g_slots[i]->name, name) == 0) return g_slots[i];
    return nullptr;
}

plugin_slot* find_by_name(const char* name) {
    for (int32_t i = 0; i < g_slot_count; ++i)
        if (strcmp(g_slots[i]->name, name) == 0) return g_slots[i];
    return nullptr;
}

void drop_slot(int32_t index) {
    cvml_mem_free(g_slots[index]);
    memmove(&g_slots[index], &g_slots[index + 1],
            sizeof(g_slots[0]) * static_cast<size_t>(g_slot_count - index - 1));
    --g_slot_count;
}

/* A new record. When all are taken, the oldest record of a refused plugin makes room:
 * refusals are reported, but never keep a good plugin from loading. */
plugin_slot* new_slot(void) {
    for (int32_t i = 0; g_slot_count == kMaxPlugins && i < g_slot_count; ++i)
        if (!g_slots[i]->loaded && g_slots[i] != g_current) drop_slot(i);
    if (g_slot_count == kMaxPlugins) return nullptr;
    plugin_slot* s = static_cast<plugin_slot*>(cvml_mem_calloc(1, sizeof(plugin_slot)));
    if (s) g_slots[g_slot_count++] = s;
    return s;
}

/* Records the current error as the reason the plugin is absent and returns `rc`. */
int refuse(plugin_slot* s, int rc) {
    cvml_strlcpy(s->reason, cvml_error_message(), sizeof s->reason);
    if (!s->reason[0]) cvml_strlcpy(s->reason, "unknown failure", sizeof s->reason);
    s->loaded = 0;
    return rc;
}

void unregister_items(plugin_slot* s) {
    for (int32_t i = s->item_count - 1; i >= 0; --i) {
        const plugin_item& it = s->items[i];
        if (it.kind == ITEM_DEVICE)
            device_registry_remove(static_cast<cvml_device*>(const_cast<void*>(it.ptr)));
        else
            serializer_registry_remove(static_cast<const cvml_serializer*>(it.ptr));
    }
    s->item_count = 0;
}

/* ---- the host table ------------------------------------------------------------------ */

/* Registers an item for the plugin whose entry is running, keeping track of it so
 * that a failing entry or the library's release can take it back. */
int add_item(item_kind kind, const void* ptr, const char* what) {
    if (!g_current)
        return cvml_fail(CVML_ERR_RUNTIME, "%s: only a plugin's entry point may register", what);
    if (g_current->item_count == kMaxItems)
        return cvml_fail(CVML_ERR_RUNTIME, "plugin '%s' registers more than %d items",
                         g_current->name, kMaxItems);
    int rc = kind == ITEM_DEVICE
                 ? device_registry_add(static_cast<cvml_device*>(const_cast<void*>(ptr)))
                 : serializer_registry_add(static_cast<const cvml_serializer*>(ptr));
    if (!rc) g_current->items[g_current->item_count++] = {kind, ptr};
    return rc;
}

int host_plan_order(cvml_ir_graph* g, cvml_ir_subgraph* sg) {
    int32_t* step_of_node = plan_step_of_node(g, sg);
    if (!step_of_node) return cvml_fail_out_of_memory();
    const int rc = plan_order(g, sg, step_of_node);
    cvml_scratch_free(step_of_node);
    return rc;
}

int host_register_device(cvml_device* dev) {
    return add_item(ITEM_DEVICE, dev, "register_device");
}

int host_fail(int status, const char* message) {
    return cvml_fail(status, "%s", message ? message : "");
}

/* ---- loading -------------------------------------------------------------------------- */

int load_file(const char* given) {
    char path[PATH_MAX];
    if (!os_realpath(given, path)) {
        plugin_slot* s = find_by_path(given);
        if (!s) s = new_slot();
        int rc = cvml_fail(CVML_ERR_RUNTIME, "plugin '%s' not found", given);
        if (!s) return rc;
        cvml_strlcpy(s->path, given, sizeof s->path);
        cvml_strlcpy(s->name, base_name(given), sizeof s->name);
        return refuse(s, rc);
    }
    plugin_slot* s = find_by_path(path);
    if (s && s->loaded) return CVML_OK;
    if (!s) s = new_slot();
    if (!s) return cvml_fail(CVML_ERR_RUNTIME, "more than %d plugins", kMaxPlugins);
    cvml_strlcpy(s->path, path, sizeof s->path);
    dir_name(path, s->dir, sizeof s->dir);
    if (!s->name[0]) cvml_strlcpy(s->name, base_name(path), sizeof s->name);
    s->reason[0] = '\0';

    if (!os_is_regular(path))
        return refuse(s, cvml_fail(CVML_ERR_RUNTIME,
                                   "plugin '%s' is not a regular file (a directory, FIFO or "
                                   "device): not opened",
                                   path));
    void* h = os_open(path);
    if (!h)
        return refuse(s,
                      cvml_fail(CVML_ERR_RUNTIME, "cannot open plugin '%s': %s", path, os_error()));
    const cvml_plugin_header* hd =
        static_cast<const cvml_plugin_header*>(os_symbol(h, CVML_PLUGIN_HEADER_SYMBOL));
    if (!hd) {
        os_close(h);
        return refuse(
            s, cvml_fail(CVML_ERR_RUNTIME, "'%s' is not a cvm-lite plugin: it does not export %s",
                         path, CVML_PLUGIN_HEADER_SYMBOL));
    }
    // The declaration must be a data object holding at least the two fields read
    // first, aligned for them; a function or a 1-byte object is not read as one.
    size_t declared = 0;
    if (!os_data_symbol_size(hd, &declared) || declared < 2 * sizeof(uint32_t) ||
        reinterpret_cast<uintptr_t>(hd) % alignof(cvml_plugin_header) != 0) {
        os_close(h);
        return refuse(s, cvml_fail(CVML_ERR_RUNTIME,
                                   "plugin '%s': %s is not a plugin declaration (a data object of "
                                   "%" CVML_PRIuSIZE " bytes, aligned): refused",
                                   path, CVML_PLUGIN_HEADER_SYMBOL, sizeof(cvml_plugin_header)));
    }
    if (!header_acceptable(hd)) {
        const unsigned v = hd->abi_version;
        os_close(h);
        return refuse(
            s, cvml_fail(CVML_ERR_RUNTIME,
                         "plugin '%s' was built for plugin ABI version %u.%u; this "
                         "library (cvm-lite %s) speaks ABI version %u.%u: refused",
                         path, static_cast<unsigned>(CVML_PLUGIN_ABI_MAJOR_OF(v)),
                         static_cast<unsigned>(CVML_PLUGIN_ABI_MINOR_OF(v)), CVML_VERSION_STRING,
                         static_cast<unsigned>(CVML_PLUGIN_ABI_MAJOR),
                         static_cast<unsigned>(CVML_PLUGIN_ABI_MINOR)));
    }
    if (declared < hd->struct_size) {
        os_close(h);
        return refuse(s, cvml_fail(CVML_ERR_RUNTIME,
                                   "plugin '%s': %s is %" CVML_PRIuSIZE
                                   " bytes, smaller than a declaration: refused",
                                   path, CVML_PLUGIN_HEADER_SYMBOL, declared));
    }
    cvml_strlcpy(s->name, hd->name ? hd->name : base_name(path), sizeof s->name);
    cvml_strlcpy(s->version, hd->version ? hd->version : "", sizeof s->version);
    plugin_slot* twin = find_loaded_by_name(s->name);
    if (twin && twin != s) {
        // The same plugin from another file: harmless, the first one stays.
        os_close(h);
        for (int32_t i = 0; i < g_slot_count; ++i)
            if (g_slots[i] == s) {
                memmove(&g_slots[i], &g_slots[i + 1],
                        sizeof(g_slots[0]) * static_cast<size_t>(g_slot_count - i - 1));
                --g_slot_count;
                break;
            }
        cvml_mem_free(s);
        return CVML_OK;
    }
    cvml_plugin_entry_fn entry = nullptr;
    void* sym = os_symbol(h, CVML_PLUGIN_ENTRY_SYMBOL);
    memcpy(&entry, &sym, sizeof entry);
    if (!entry) {
        os_close(h);
        return refuse(s, cvml_fail(CVML_ERR_RUNTIME, "plugin '%s' does not export %s", path,
                                   CVML_PLUGIN_ENTRY_SYMBOL));
    }
    s->host = {
        sizeof(cvml_host_api),
        CVML_PLUGIN_ABI_VERSION,
        CVML_VERSION_STRING,
        host_register_device,
        host_fail,
        s->dir,
        plugin_ir_api(),
        host_plan_order,
        fusion_plan,
        memory_plan,
    };
    cvml_clear_error();
    g_current = s;
    int rc = entry(&s->host);
    g_current = nullptr;
    if (rc != CVML_OK) {
        // Never half-loaded: whatever the entry registered before failing goes.
        char message[512];
        cvml_strlcpy(message, cvml_error_message(), sizeof message);
        unregister_items(s);
        os_close(h);
        return refuse(s, cvml_fail(rc == CVML_ERR_LOGIC ? CVML_ERR_LOGIC : CVML_ERR_RUNTIME,
                                   "plugin '%s' %s: %s", s->name, s->version,
                                   message[0] ? message : "its entry point failed"));
    }
    s->handle = h;
    s->loaded = 1;
    return CVML_OK;
}

/* Plugin file names of one directory, at most kMaxDirectoryNames (a directory of a
 * million files must not stall the init), sorted so that the registration (priority)
 * order never depends on the file system. */
constexpr int32_t kMaxDirectoryNames = 1024;

struct name_list {
    char** names;
    int32_t count;
};

void add_name(name_list* list, const char* name) {
    if (list->count == kMaxDirectoryNames || !is_plugin_file_name(name)) return;
    if (list->count % 64 == 0) {
        char** grown = static_cast<char**>(
            cvml_mem_realloc(list->names, sizeof(char*) * (static_cast<size_t>(list->count) + 64)));
        if (!grown) return;
        list->names = grown;
    }
    char* copy = ir_strdup(name);
    if (copy) list->names[list->count++] = copy;
}

int by_name(const void* a, const void* b) {
    return strcmp(*static_cast<char* const*>(a), *static_cast<char* const*>(b));
}

void load_directory(const char* dir) {
    name_list list = {nullptr, 0};
#ifdef _WIN32
    char pattern[PATH_MAX];
    snprintf(pattern, sizeof pattern, "%s\\" PLUGIN_PREFIX "*" PLUGIN_SUFFIX, dir);
    WIN32_FIND_DATAA fd;
    HANDLE f = FindFirstFileA(pattern, &fd);
    if (f == INVALID_HANDLE_VALUE) return;
    do add_name(&list, fd.cFileName);
    while (FindNextFileA(f, &fd));
    FindClose(f);
#else
    DIR* d = opendir(dir);
    if (!d) return;
    while (struct dirent* e = readdir(d)) add_name(&list, e->d_name);
    closedir(d);
#endif
    if (list.count > 1)
        cvml_sort(list.names, static_cast<size_t>(list.count), sizeof(char*), by_name);
    for (int32_t i = 0; i < list.count; ++i) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, list.names[i]);
        load_file(path);
        cvml_mem_free(list.names[i]);
    }
    cvml_mem_free(list.names);
}

/* An entry of CVML_PLUGIN_PATH or a plugin directory: a directory or a file. */
void load_entry(const char* entry, bool must_exist) {
    if (!entry[0]) return;
    if (os_is_dir(entry)) {
        load_directory(entry);
        return;
    }
    char path[PATH_MAX];
    if (os_realpath(entry, path) || must_exist) load_file(entry);
}

/* The file holding the library's code, whose place tells which install it belongs
 * to: the shared library itself, or the program a static library was linked into.
 * `*is_program` says which. False when it cannot be told (then only the configured
 * CVML_PLUGIN_INSTALL_DIR is searched). Windows: GetModuleHandleEx goes here. */
bool code_file(char* out, bool* is_program) {
#ifndef _WIN32
    Dl_info info;
    if (!dladdr(reinterpret_cast<void*>(&plugin_loader_init), &info) || !info.dli_fname)
        return false;
    char program[PATH_MAX];
    bool have_program = os_realpath("/proc/self/exe", program);
    // glibc names the main program by its argv[0], which may be a bare name found on
    // PATH: a name without a slash is the program, read from /proc/self/exe.
    if (!strchr(info.dli_fname, '/') || !os_realpath(info.dli_fname, out)) {
        if (!have_program) return false;
        cvml_strlcpy(out, program, PATH_MAX);
        *is_program = true;
        return true;
    }
    *is_program = have_program && strcmp(out, program) == 0;
    return true;
#else
    HMODULE self = nullptr;
    const DWORD flags =
        GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT;
    if (!GetModuleHandleExA(flags, reinterpret_cast<LPCSTR>(&plugin_loader_init), &self))
        return false;
    const DWORD n = GetModuleFileNameA(self, out, PATH_MAX);
    *is_program = false;
    return n > 0 && n < PATH_MAX;
#endif
}

/* The plugin directory of the install the library's code came from, so a moved or
 * non-default prefix works with no environment: next to a shared library
 * LIBDIR/cvml/plugins, for a program BINDIR/../lib/cvml/plugins (the relative path
 * from the install's bin to its plugin directory). "" when unknown. */
void library_dirs(char* own, size_t cap) {
    own[0] = '\0';
    char file[PATH_MAX];
    bool is_program = false;
    if (!code_file(file, &is_program)) return;
    char dir[PATH_MAX];
    dir_name(file, dir, sizeof dir);
#ifdef _WIN32
    const char* rel = "cvml\\plugins";
#else
    const char* rel = is_program ? CVML_PLUGIN_DIR_FROM_BINDIR : "cvml/plugins";
#endif
    // "bin/../lib" read as "lib" by hand: the directory may not exist to be resolved.
    while (strncmp(rel, "../", 3) == 0 && strcmp(dir, "/") != 0) {
        char up[PATH_MAX];
        dir_name(dir, up, sizeof up);
        cvml_strlcpy(dir, up[0] ? up : "/", sizeof dir);
        rel += 3;
    }
    // A path too long for `own` is dropped rather than searched truncated.
    int n = snprintf(own, cap, "%s%c%s", dir, DIR_SEP, rel);
    if (n < 0 || static_cast<size_t>(n) >= cap) own[0] = '\0';
}

void note_expected(const char* searched) {
    const char* p = CVML_EXPECTED_PLUGINS;
    while (*p) {
        char name[64];
        size_t n = strcspn(p, ",");
        if (n >= sizeof name) n = sizeof name - 1;
        memcpy(name, p, n);
        name[n] = '\0';
        p += n + (p[n] == ',' ? 1 : 0);
        if (!name[0] || find_by_name(name)) continue;
        plugin_slot* s = new_slot();
        if (!s) return;
        cvml_strlcpy(s->name, name, sizeof s->name);
        // The searched list may be long; the reason keeps its head (%.*s bounds it).
        snprintf(s->reason, sizeof s->reason,
                 "not found: no " PLUGIN_PREFIX "%s" PLUGIN_SUFFIX " in CVML_PLUGIN_PATH or %.*s",
                 name, static_cast<int>(sizeof s->reason / 2), searched);
    }
}

}  // namespace

void plugin_loader_init(void) {
    const char* env = getenv("CVML_PLUGIN_PATH");
    if (env) {
        const char* p = env;
        while (*p) {
            char entry[PATH_MAX];
            size_t n = strcspn(p, PATH_SEP == ':' ? ":" : ";");
            if (n < sizeof entry) {
                memcpy(entry, p, n);
                entry[n] = '\0';
                load_entry(entry, true);
            }
            p += n + (p[n] ? 1 : 0);
        }
    }
    char own[PATH_MAX];
    library_dirs(own, sizeof own);
    load_entry(own, false);
    load_entry(CVML_PLUGIN_INSTALL_DIR, false);
    char searched[2 * PATH_MAX + 8];
    if (!own[0] || strcmp(own, CVML_PLUGIN_INSTALL_DIR) == 0)
        cvml_strlcpy(searched, CVML_PLUGIN_INSTALL_DIR, sizeof searched);
    else if (!CVML_PLUGIN_INSTALL_DIR[0])
        cvml_strlcpy(searched, own, sizeof searched);
    else
        snprintf(searched, sizeof searched, "%s, %s", own, CVML_PLUGIN_INSTALL_DIR);
    note_expected(searched);
    cvml_clear_error();
}

void plugin_loader_release(void) {
    for (int32_t i = g_slot_count - 1; i >= 0; --i) {
        plugin_slot* s = g_slots[i];
        unregister_items(s);
        if (s->handle) os_close(s->handle);
        cvml_mem_free(s);
        g_slots[i] = nullptr;
    }
    g_slot_count = 0;
}

int plugin_load(const char* path) {
    return load_file(path);
}

int32_t plugin_count(void) {
    return g_slot_count;
}

int plugin_at(int32_t index, plugin_record* out) {
    if (index < 0 || index >= g_slot_count)
        return cvml_fail(CVML_ERR_LOGIC, "plugin index %d outside 0..%d", index, g_slot_count - 1);
    const plugin_slot* s = g_slots[index];
    out->name = s->name;
    out->version = s->version;
    out->path = s->path;
    out->loaded = s->loaded;
    out->reason = s->reason;
    return CVML_OK;
}
