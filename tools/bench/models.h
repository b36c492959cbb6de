/* Benchmark models built with the builder API: ResNet-18-shaped, MobileNet-v1-shaped
 * and an SSD-style detection head with NMS, quantized the way MRT's models are
 * (int8 weights, conv + bias, cvm_right_shift back to 8 bits, relu, residual adds
 * clipped with cvm_clip). Weights are pseudo-random from a seed; shifts are chosen
 * from the expected magnitude of each sum so activations stay in range and the
 * outputs are not trivial. */
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "cvml.h"

namespace bench {

struct ModelSpec {
    std::string name; /* resnet18, mobilenet, ssd */
    int batch = 1;
    int size = 0; /* input height = width; 0: the model's default */
    uint32_t seed = 1;
};

/* Names accepted by build_model. */
std::vector<std::string> model_names();
/* Builds, sets outputs and verifies; on failure returns the status with `error` set. */
int build_model(cvml_context* ctx, const ModelSpec& spec, cvml_graph** out, std::string* error);
/* A deterministic input for a graph's first input (values within its precision). */
std::vector<int32_t> make_input(cvml_graph* g, uint32_t seed);

}  // namespace bench
