/* What the emulated-plugin tests share: where the plugin is, and loading the library
 * with it as the first device (every island kept on it). */
#pragma once

#include <stdlib.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cvml.h"

namespace emu_setup {

/* The emulated plugin's directory; CVML_CUDA_EMU_PLUGIN_DIR picks another build of it
 * (small grids, the Turing path). */
inline std::string plugin_dir() {
    const char* dir = getenv("CVML_CUDA_EMU_PLUGIN_DIR");
    return dir ? dir : CVML_CUDA_EMU_PLUGIN_DIR;
}

/* Initialises the library with the emulated plugin loaded and every island on it; a
 * fatal failure when the plugin does not load. */
inline void init_with_emulated_plugin() {
    setenv("CVML_PLUGIN_PATH", plugin_dir().c_str(), 1);
    setenv("CVML_CUDA_ISLAND_WORK", "0", 1);
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    const char *name = "", *version = "";
    ASSERT_EQ(cvml_device_info(0, &name, &version), CVML_OK);
    ASSERT_STREQ(name, "cuda") << "the emulated plugin did not load from " << plugin_dir();
}

/* A context and the graph loaded in it, released together. */
struct LoadedGraph {
    cvml_context* ctx = nullptr;
    cvml_graph* graph = nullptr;
    ~LoadedGraph() {
        cvml_graph_release(graph);
        cvml_context_release(ctx);
    }
};

/* Creates m's context with the devices "cuda" (when asked) then "cpu", the fallback. */
inline void use_devices(bool cuda, LoadedGraph* m) {
    ASSERT_EQ(cvml_context_create(&m->ctx), CVML_OK);
    std::vector<const char*> devices = {"cpu"};
    if (cuda) devices.insert(devices.begin(), "cuda");
    ASSERT_EQ(cvml_context_set_devices(m->ctx, devices.data(), static_cast<int>(devices.size())),
              CVML_OK)
        << cvml_last_error();
}

}  // namespace emu_setup
