/* cvml-dnnl-peer: the benchmark models of `cvml bench` (ResNet-18 and MobileNet-v1 at
 * 224x224) built from oneDNN int8 primitives, so that tools/bench/compare.sh can time
 * cvm-lite against oneDNN on the same machine in interleaved rounds.
 *
 * What is comparable: the multiply-accumulate work (the same layer shapes and MAC count)
 * and the memory traffic of int8 activations. What is not: oneDNN requantizes with float
 * scales where CVM shifts and clips, and its weights are random (no model file).
 * Activations are u8 NHWC, weights s8 in oneDNN's preferred layout (reordered once,
 * before timing), bias s32, relu (and sum + relu for a residual) as post-ops.
 *
 *   cvml-dnnl-peer resnet18|mobilenet [--batch N] [--runs N] [--warmup N] [--gap-ms G]
 *
 * Threads: OMP_NUM_THREADS. Prints one JSON object (median_ms, macs, threads, ...). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct Step {
    dnnl::primitive primitive;
    std::unordered_map<int, memory> args;
};

/* The network as a list of primitives with their arguments, built layer by layer. */
class Net {
  public:
    explicit Net(int batch)
        : batch_(batch), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

    memory input(int c, int size) {
        memory x({{batch_, c, size, size}, dt::u8, tag::nhwc}, engine_);
        fill_u8(x);
        return x;
    }

    /* A convolution with bias and relu. With `residual`, the output is written into that
     * buffer and added to what it holds before the relu (sum post-op). */
    memory conv(const memory& src, int oc, int k, int stride, int pad, int groups,
                const memory* residual = nullptr) {
        const memory::dims in = src.get_desc().dims();
        const int ic = static_cast<int>(in[1]), ih = static_cast<int>(in[2]);
        const int iw = static_cast<int>(in[3]);
        const int oh = (ih + 2 * pad - k) / stride + 1, ow = (iw + 2 * pad - k) / stride + 1;
        macs_ += static_cast<double>(batch_) * oc * oh * ow * (ic / groups) * k * k;

        const memory::dims wdims = groups == 1
                                       ? memory::dims{oc, ic, k, k}
                                       : memory::dims{groups, oc / groups, ic / groups, k, k};
        const memory::desc src_md({batch_, ic, ih, iw}, dt::u8, tag::nhwc);
        const memory::desc wei_md(wdims, dt::s8, tag::any);
        const memory::desc bias_md({oc}, dt::s32, tag::a);
        const memory::desc dst_md({batch_, oc, oh, ow}, dt::u8, tag::nhwc);
        const dnnl::convolution_forward::desc d(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md, wei_md,
            bias_md, dst_md, {stride, stride}, {pad, pad}, {pad, pad});
        dnnl::primitive_attr attr;
        attr.set_output_scales(
            0, {1.0f / (64.0f * std::sqrt(static_cast<float>(ic / groups * k * k)))});
        dnnl::post_ops ops;
        if (residual) ops.append_sum(1.0f);
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        attr.set_post_ops(ops);
        const dnnl::convolution_forward::primitive_desc pd(d, attr, engine_);

        memory weights = reordered_weights(
            memory({wdims, dt::s8, groups == 1 ? tag::oihw : tag::goihw}, engine_),
            pd.weights_desc());
        memory bias(bias_md, engine_);
        fill_s32(bias, 20000);
        memory dst = residual ? *residual : memory(dst_md, engine_);
        steps_.push_back({dnnl::convolution_forward(pd),
                          {{DNNL_ARG_SRC, src},
                           {DNNL_ARG_WEIGHTS, weights},
                           {DNNL_ARG_BIAS, bias},
                           {DNNL_ARG_DST, dst}}});
        return dst;
    }

    memory pool(const memory& src, dnnl::algorithm alg, int k, int stride, int pad) {
        const memory::dims in = src.get_desc().dims();
        const int c = static_cast<int>(in[1]), ih = static_cast<int>(in[2]);
        const int iw = static_cast<int>(in[3]);
        const int oh = (ih + 2 * pad - k) / stride + 1, ow = (iw + 2 * pad - k) / stride + 1;
        const memory::desc dst_md({batch_, c, oh, ow}, dt::u8, tag::nhwc);
        const dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, src.get_desc(),
                                            dst_md, {stride, stride}, {k, k}, {pad, pad},
                                            {pad, pad});
        const dnnl::pooling_forward::primitive_desc pd(d, engine_);
        memory dst(dst_md, engine_);
        steps_.push_back({dnnl::pooling_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}});
        return dst;
    }

    /* The global pooling and the 1000-way classifier (s32 out, as CVM's dense). */
    void classifier(const memory& src, int classes) {
        const memory::dims in = src.get_desc().dims();
        const memory pooled = pool(src, dnnl::algorithm::pooling_avg_exclude_padding,
                                   static_cast<int>(in[2]), static_cast<int>(in[2]), 0);
        const int c = static_cast<int>(in[1]);
        macs_ += static_cast<double>(batch_) * c * classes;
        const memory::desc src_md({batch_, c, 1, 1}, dt::u8, tag::nhwc);
        const memory::desc wei_md({classes, c, 1, 1}, dt::s8, tag::any);
        const memory::desc bias_md({classes}, dt::s32, tag::a);
        const memory::desc dst_md({batch_, classes}, dt::s32, tag::nc);
        const dnnl::inner_product_forward::desc d(dnnl::prop_kind::forward_inference, src_md,
                                                  wei_md, bias_md, dst_md);
        const dnnl::inner_product_forward::primitive_desc pd(d, engine_);
        memory weights = reordered_weights(memory({{classes, c, 1, 1}, dt::s8, tag::oihw}, engine_),
                                           pd.weights_desc());
        memory bias(bias_md, engine_);
        fill_s32(bias, 20000);
        memory dst(dst_md, engine_);
        steps_.push_back({dnnl::inner_product_forward(pd),
                          {{DNNL_ARG_SRC, pooled},
                           {DNNL_ARG_WEIGHTS, weights},
                           {DNNL_ARG_BIAS, bias},
                           {DNNL_ARG_DST, dst}}});
    }

    void run() {
        for (Step& s : steps_) s.primitive.execute(stream_, s.args);
        stream_.wait();
    }

    double macs() const { return macs_; }

  private:
    memory reordered_weights(memory user, const memory::desc& wanted) {
        fill_s8(user);
        memory w(wanted, engine_);
        dnnl::reorder(user, w).execute(stream_, user, w);
        stream_.wait();
        return w;
    }

    void fill_u8(memory& m) {
        uint8_t* p = static_cast<uint8_t*>(m.get_data_handle());
        for (size_t i = 0; i < m.get_desc().get_size(); ++i)
            p[i] = static_cast<uint8_t>(rng_() & 0x7f);
    }

    void fill_s8(memory& m) {
        int8_t* p = static_cast<int8_t*>(m.get_data_handle());
        for (size_t i = 0; i < m.get_desc().get_size(); ++i)
            p[i] = static_cast<int8_t>(static_cast<int>(rng_() % 255) - 127);
    }

    void fill_s32(memory& m, int bound) {
        int32_t* p = static_cast<int32_t*>(m.get_data_handle());
        std::uniform_int_distribution<int> d(-bound, bound);
        for (size_t i = 0; i < m.get_desc().get_size() / sizeof(int32_t); ++i) p[i] = d(rng_);
    }

    int batch_;
    dnnl::engine engine_;
    dnnl::stream stream_;
    std::vector<Step> steps_;
    std::mt19937 rng_{7};
    double macs_ = 0;
};

/* ResNet-18 as tools/bench/models.cpp builds it: 7x7/2 stem, 3x3/2 max pool, four stages
 * of two basic blocks (a 1x1/2 projection where the shape changes), classifier. */
void build_resnet18(Net& net) {
    memory x = net.input(3, 224);
    x = net.conv(x, 64, 7, 2, 3, 1);
    x = net.pool(x, dnnl::algorithm::pooling_max, 3, 2, 1);
    const int widths[4] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage)
        for (int block = 0; block < 2; ++block) {
            const int stride = stage > 0 && block == 0 ? 2 : 1;
            const int in_c = static_cast<int>(x.get_desc().dims()[1]);
            const memory t = net.conv(x, widths[stage], 3, stride, 1, 1);
            const memory identity = stride == 1 && in_c == widths[stage]
                                        ? x
                                        : net.conv(x, widths[stage], 1, stride, 0, 1);
            x = net.conv(t, widths[stage], 3, 1, 1, 1, &identity);
        }
    net.classifier(x, 1000);
}

/* MobileNet-v1 as tools/bench/models.cpp builds it: 3x3/2 stem, 13 depthwise 3x3 +
 * pointwise 1x1 pairs, classifier. */
void build_mobilenet(Net& net) {
    memory x = net.input(3, 224);
    x = net.conv(x, 32, 3, 2, 1, 1);
    const int plan[13][2] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},  {512, 2}, {512, 1},
                             {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
    for (const auto& p : plan) {
        const int c = static_cast<int>(x.get_desc().dims()[1]);
        x = net.conv(x, c, 3, p[1], 1, c);
        x = net.conv(x, p[0], 1, 1, 0, 1);
    }
    net.classifier(x, 1000);
}

int usage() {
    fprintf(stderr,
            "usage: cvml-dnnl-peer resnet18|mobilenet [--batch N] [--runs N] [--warmup N] "
            "[--gap-ms G]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::string model = argv[1];
    int batch = 1, runs = 20, warmup = 3, gap_ms = 0;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) return usage();
        const int v = atoi(argv[++i]);
        if (a == "--batch" && v >= 1)
            batch = v;
        else if (a == "--runs" && v >= 1)
            runs = v;
        else if (a == "--warmup" && v >= 0)
            warmup = v;
        else if (a == "--gap-ms" && v >= 0)
            gap_ms = v;
        else
            return usage();
    }
    Net net(batch);
    if (model == "resnet18")
        build_resnet18(net);
    else if (model == "mobilenet")
        build_mobilenet(net);
    else
        return usage();
    for (int i = 0; i < warmup; ++i) net.run();
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
        if (gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
        const auto start = std::chrono::steady_clock::now();
        net.run();
        times.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
    std::sort(times.begin(), times.end());
    printf(
        "{\"peer\": \"onednn\", \"model\": \"%s\", \"batch\": %d, \"threads\": %d, "
        "\"runs\": %d, \"gap_ms\": %d, \"median_ms\": %.4f, \"min_ms\": %.4f, \"macs\": %.0f}\n",
        model.c_str(), batch, omp_get_max_threads(), runs, gap_ms, times[times.size() / 2],
        times.front(), net.macs());
    return 0;
}
