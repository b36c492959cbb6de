#include "module/registry.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "module/device.h"
#include "module/serializer.h"
#include "utility/error.h"
#include "utility/platform.h"

namespace {

constexpr int32_t kMaxDevices = 16;
/* cvml_device as ABI 2.0 laid it out: everything before island_work_per_element (2.1). */
constexpr uint32_t kDeviceMinor0Size = offsetof(cvml_device, island_work_per_element);
constexpr int32_t kMaxSerializers = 8;
cvml_device* g_devices[kMaxDevices];
int32_t g_device_count;
const cvml_serializer* g_serializers[kMaxSerializers];
cvml_params_file_loader g_params_file_loaders[kMaxSerializers]; /* by index in g_serializers */
/* A bare-metal build reads params from memory only: no serializer sets a file loader
 * (cvm.cpp), and the table leaves the image. */
constexpr bool kFileLoaders = !CVML_BARE_METAL;
int32_t g_serializer_count;
int g_registered;

/* The tables are small; linear search keeps them free of allocation. */
template <typename T>
int table_add(T** table, int32_t* count, int32_t cap, T* item, const char* kind, const char* name) {
    for (int32_t i = 0; i < *count; ++i)
        if (strcmp(table[i]->name, name) == 0)
            return cvml_fail(CVML_ERR_RUNTIME, "%s '%s' registered twice", kind, name);
    if (*count == cap)
        return cvml_fail(CVML_ERR_RUNTIME, "%s table full (%" PRId32 ") registering '%s'", kind,
                         cap, name);
    table[(*count)++] = item;
    return CVML_OK;
}

template <typename T>
int table_remove(T** table, int32_t* count, T* item, const char* kind) {
    for (int32_t i = 0; i < *count; ++i) {
        if (table[i] != item) continue;
        for (int32_t k = i + 1; k < *count; ++k) table[k - 1] = table[k];
        --*count;
        return CVML_OK;
    }
    return cvml_fail(CVML_ERR_RUNTIME, "%s is not registered", kind);
}

/* A plugin's device as api/cvml_plugin.h asks: the version rules (the same major
 * version, at least the minor 0 layout; fields a later minor appended are read through
 * device.h's helpers), a name, the four mandatory operations, all memory ops or none. */
int check_plugin_device(const cvml_device* dev) {
    const uint32_t major = CVML_PLUGIN_ABI_MAJOR_OF(dev->abi_version);
    if (major != CVML_PLUGIN_ABI_MAJOR || dev->struct_size < kDeviceMinor0Size)
        return cvml_fail(
            CVML_ERR_RUNTIME,
            "a device was built for plugin ABI %u.%u (struct of %u bytes); this "
            "library speaks ABI %u.%u (at least %u bytes)",
            static_cast<unsigned>(major),
            static_cast<unsigned>(CVML_PLUGIN_ABI_MINOR_OF(dev->abi_version)),
            static_cast<unsigned>(dev->struct_size), static_cast<unsigned>(CVML_PLUGIN_ABI_MAJOR),
            static_cast<unsigned>(CVML_PLUGIN_ABI_MINOR), static_cast<unsigned>(kDeviceMinor0Size));
    if (!dev->name) return cvml_fail(CVML_ERR_RUNTIME, "device without a name");
    if (strlen(dev->name) >= 32 || !dev->supports || !dev->prerun || !dev->run || !dev->postrun)
        return cvml_fail(CVML_ERR_RUNTIME,
                         "device '%.40s': name of 32 bytes or more, or supports/prerun/run/postrun "
                         "missing",
                         dev->name);
    bool has_mem = dev->mem_alloc || dev->mem_free || dev->copy_to_device || dev->copy_to_host;
    bool all_mem = dev->mem_alloc && dev->mem_free && dev->copy_to_device && dev->copy_to_host;
    if (has_mem && !all_mem)
        return cvml_fail(CVML_ERR_RUNTIME, "device '%s' has some memory ops but not all four",
                         dev->name);
    return CVML_OK;
}

}  // namespace

int device_registry_add(cvml_device* dev) {
    if (!dev) return cvml_fail(CVML_ERR_RUNTIME, "device without a name");
    // Without the plugin loader only the library's own devices register (compiled with
    // this very header): the checks would be 200 bytes of a microcontroller's image.
    if (CVML_WITH_PLUGINS) {
        int rc = check_plugin_device(dev);
        if (rc) return rc;
    }
    return table_add(g_devices, &g_device_count, kMaxDevices, dev, "device", dev->name);
}

int device_registry_remove(cvml_device* dev) {
    int rc = table_remove(g_devices, &g_device_count, dev, "device");
    if (rc == CVML_OK && dev->release) dev->release(dev);
    return rc;
}

cvml_device* device_registry_find(const char* name) {
    for (int32_t i = 0; i < g_device_count; ++i)
        if (strcmp(g_devices[i]->name, name) == 0) return g_devices[i];
    return nullptr;
}

int32_t device_registry_count(void) {
    return g_device_count;
}

cvml_device* device_registry_at(int32_t index) {
    return index >= 0 && index < g_device_count ? g_devices[index] : nullptr;
}

int32_t device_registry_index(const cvml_device* dev) {
    for (int32_t i = 0; i < g_device_count; ++i)
        if (g_devices[i] == dev) return i;
    return -1;
}

int serializer_registry_add(const cvml_serializer* s) {
    if (!s || !s->name) return cvml_fail(CVML_ERR_RUNTIME, "serializer without a name");
    return table_add(g_serializers, &g_serializer_count, kMaxSerializers, s, "serializer", s->name);
}

int serializer_registry_remove(const cvml_serializer* s) {
    // The loaders follow their serializers as the table closes up.
    int32_t at = -1;
    for (int32_t i = 0; i < g_serializer_count; ++i)
        if (g_serializers[i] == s) at = i;
    const int rc = table_remove(g_serializers, &g_serializer_count, s, "serializer");
    if (kFileLoaders && rc == CVML_OK && at >= 0) {
        for (int32_t i = at; i < g_serializer_count; ++i)
            g_params_file_loaders[i] = g_params_file_loaders[i + 1];
        g_params_file_loaders[g_serializer_count] = nullptr;
    }
    return rc;
}

int serializer_set_params_file_loader(const cvml_serializer* s, cvml_params_file_loader load) {
    for (int32_t i = 0; i < g_serializer_count; ++i)
        if (g_serializers[i] == s) {
            g_params_file_loaders[i] = load;
            return CVML_OK;
        }
    return cvml_fail(CVML_ERR_RUNTIME, "serializer '%s' is not registered",
                     s && s->name ? s->name : "");
}

cvml_params_file_loader serializer_params_file_loader(const cvml_serializer* s) {
    if (!kFileLoaders) return nullptr;
    for (int32_t i = 0; i < g_serializer_count; ++i)
        if (g_serializers[i] == s) return g_params_file_loaders[i];
    return nullptr;
}

const cvml_serializer* serializer_registry_find(const char* name) {
    for (int32_t i = 0; i < g_serializer_count; ++i)
        if (strcmp(g_serializers[i]->name, name) == 0) return g_serializers[i];
    return nullptr;
}

int32_t serializer_registry_count(void) {
    return g_serializer_count;
}

int registry_register_all(void) {
    for (int i = 0; i < cvml_generated_registry_count; ++i) {
        const registry_entry* e = &cvml_generated_registry[i];
        int rc = e->do_register();
        if (rc != CVML_OK) {
            cvml_fail_context(rc, "registering %s '%s' failed: ", e->kind, e->name);
            for (int k = i - 1; k >= 0; --k) cvml_generated_registry[k].do_unregister();
            return rc;
        }
    }
    g_registered = 1;
    return CVML_OK;
}

void registry_unregister_all(void) {
    if (!g_registered) return;
    for (int i = cvml_generated_registry_count - 1; i >= 0; --i)
        cvml_generated_registry[i].do_unregister();
    g_registered = 0;
}
