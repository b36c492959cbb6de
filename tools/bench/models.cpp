#include "models.h"

#include <math.h>

#include <random>
#include <utility>

namespace bench {
namespace {

using Attrs = std::vector<std::pair<std::string, std::string>>;

/* E[w^2] of weights uniform in [-127, 127]. */
constexpr double kWeightM2 = 127.0 * 128.0 / 3.0;
/* Target standard deviation of a value after its shift: clipping at 127 stays rare. */
constexpr double kTargetStd = 40.0;

std::string pair_str(int a, int b) {
    return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

int bits_of(int64_t v) {
    int b = 0;
    for (v = v < 0 ? -v : v; v; v >>= 1) ++b;
    return b;
}

struct Act {
    cvml_tensor* t = nullptr;
    int c = 0, h = 0, w = 0;
    double m2 = 0; /* expected E[x^2], to choose the next shift */
};

class Builder {
  public:
    Builder(cvml_graph* g, uint32_t seed) : g_(g), rng_(seed) {}

    int rc() const { return rc_; }
    const std::string& error() const { return err_; }

    cvml_tensor* input(const std::vector<int32_t>& dims, int precision) {
        cvml_tensor* t = nullptr;
        if (!rc_)
            check(cvml_graph_add_input(g_, "data", (int)dims.size(), dims.data(), precision, &t));
        return t;
    }

    cvml_tensor* constant(const std::vector<int32_t>& dims, int precision,
                          const std::vector<int32_t>& values) {
        cvml_tensor* t = nullptr;
        std::string name = "p" + std::to_string(counter_++);
        if (!rc_)
            check(cvml_graph_add_const(g_, name.c_str(), (int)dims.size(), dims.data(), precision,
                                       values.data(), &t));
        return t;
    }

    std::vector<int32_t> uniform(size_t n, int32_t bound) {
        std::uniform_int_distribution<int32_t> d(-bound, bound);
        std::vector<int32_t> v(n);
        for (auto& x : v) x = d(rng_);
        return v;
    }

    cvml_tensor* node(const std::string& op, const Attrs& attrs,
                      const std::vector<cvml_tensor*>& ins, int outputs = 1,
                      cvml_tensor** second = nullptr) {
        if (rc_) return nullptr;
        std::vector<const char*> k, v;
        for (auto& a : attrs) {
            k.push_back(a.first.c_str());
            v.push_back(a.second.c_str());
        }
        cvml_tensor* outs[2] = {nullptr, nullptr};
        std::string name = op + "_" + std::to_string(counter_++);
        check(cvml_graph_add_node(g_, op.c_str(), name.c_str(), k.data(), v.data(), (int)k.size(),
                                  ins.data(), (int)ins.size(), outs, outputs));
        if (second) *second = outs[1];
        return outs[0];
    }

    /* conv2d (+bias) -> cvm_right_shift(8) [-> relu], the shift from the sum's spread. */
    Act conv(const Act& x, int oc, int k, int stride, int pad, int groups, bool relu) {
        int icg = x.c / groups;
        int64_t K = (int64_t)icg * k * k;
        double sd = sqrt((double)K * kWeightM2 * x.m2);
        int shift = (int)lround(log2(sd / kTargetStd));
        if (shift < 1) shift = 1;
        std::vector<int32_t> w = uniform((size_t)oc * icg * k * k, 127);
        int32_t bias_bound = (int32_t)1 << (shift + 2 < 24 ? shift + 2 : 24);
        std::vector<int32_t> b = uniform((size_t)oc, bias_bound);
        cvml_tensor* wt = constant({oc, icg, k, k}, 8, w);
        cvml_tensor* bt = constant({oc}, bits_of(bias_bound) + 1, b);
        Act y;
        y.c = oc;
        y.h = (x.h + 2 * pad - k) / stride + 1;
        y.w = (x.w + 2 * pad - k) / stride + 1;
        cvml_tensor* c = node("conv2d",
                              {{"channels", std::to_string(oc)},
                               {"kernel_size", pair_str(k, k)},
                               {"strides", pair_str(stride, stride)},
                               {"padding", pair_str(pad, pad)},
                               {"dilation", "(1, 1)"},
                               {"groups", std::to_string(groups)},
                               {"use_bias", "True"}},
                              {x.t, wt, bt});
        y.t = rshift(c, shift);
        y.m2 = kTargetStd * kTargetStd;
        if (relu) {
            y.t = node("relu", {}, {y.t});
            y.m2 /= 2;
        }
        return y;
    }

    cvml_tensor* rshift(cvml_tensor* x, int shift) {
        return node("cvm_right_shift", {{"precision", "8"}, {"shift_bit", std::to_string(shift)}},
                    {x});
    }

    /* ResNet basic block: relu(cvm_clip(conv(relu(conv(x))) + shortcut, 8)). The
     * projection shortcut comes first so the add's other operand is ready when the
     * second conv runs (and the device can fuse the add into it). */
    Act basic_block(const Act& x, int c, int stride) {
        Act sc = x;
        if (stride != 1 || x.c != c) sc = conv(x, c, 1, stride, 0, 1, false);
        Act y = conv(x, c, 3, stride, 1, 1, true);
        y = conv(y, c, 3, 1, 1, 1, false);
        cvml_tensor* s = node("elemwise_add", {}, {y.t, sc.t});
        s = node("cvm_clip", {{"precision", "8"}}, {s});
        y.t = node("relu", {}, {s});
        y.m2 = (y.m2 + sc.m2) / 2;
        return y;
    }

    Act max_pool(const Act& x, int k, int stride, int pad) {
        Act y = x;
        y.h = (x.h + 2 * pad - k) / stride + 1;
        y.w = (x.w + 2 * pad - k) / stride + 1;
        y.t = node("max_pool2d",
                   {{"pool_size", pair_str(k, k)},
                    {"strides", pair_str(stride, stride)},
                    {"padding", pair_str(pad, pad)}},
                   {x.t});
        y.m2 = x.m2 * 1.5;
        return y;
    }

    /* Global pooling as MRT writes it: sum over H, W, then a shift back to 8 bits. */
    Act global_sum(const Act& x) {
        Act y = x;
        cvml_tensor* s = node("sum", {{"axis", "(2, 3)"}}, {x.t});
        double mean = (double)x.h * x.w * sqrt(x.m2) * 0.6;
        int shift = (int)lround(log2(mean / kTargetStd));
        y.t = rshift(s, shift < 1 ? 1 : shift);
        y.h = y.w = 1;
        y.m2 = kTargetStd * kTargetStd;
        return y;
    }

    cvml_tensor* dense(const Act& x, int units, int* shift_out = nullptr) {
        double sd = sqrt((double)x.c * kWeightM2 * x.m2);
        int shift = (int)lround(log2(sd / kTargetStd));
        if (shift < 1) shift = 1;
        cvml_tensor* wt = constant({units, x.c}, 8, uniform((size_t)units * x.c, 127));
        int32_t bias_bound = (int32_t)1 << (shift + 2);
        cvml_tensor* bt = constant({units}, bits_of(bias_bound) + 1, uniform(units, bias_bound));
        cvml_tensor* d =
            node("dense", {{"units", std::to_string(units)}, {"use_bias", "True"}}, {x.t, wt, bt});
        if (shift_out) *shift_out = shift;
        return rshift(d, shift);
    }

  private:
    void check(int rc) {
        if (rc && !rc_) {
            rc_ = rc;
            err_ = cvml_last_error();
        }
    }

    cvml_graph* g_;
    std::mt19937 rng_;
    int counter_ = 0;
    int rc_ = 0;
    std::string err_;
};

Act make_data(Builder& b, int batch, int c, int size) {
    Act x;
    x.t = b.input({batch, c, size, size}, 8);
    x.c = c;
    x.h = x.w = size;
    x.m2 = kWeightM2;  // uniform in [-127, 127] as make_input draws it
    return x;
}

cvml_tensor* resnet18(Builder& b, const ModelSpec& s) {
    Act x = make_data(b, s.batch, 3, s.size ? s.size : 224);
    x = b.conv(x, 64, 7, 2, 3, 1, true);
    x = b.max_pool(x, 3, 2, 1);
    const int widths[4] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage)
        for (int blk = 0; blk < 2; ++blk)
            x = b.basic_block(x, widths[stage], stage > 0 && blk == 0 ? 2 : 1);
    x = b.global_sum(x);
    return b.dense(x, 1000);
}

cvml_tensor* mobilenet(Builder& b, const ModelSpec& s) {
    Act x = make_data(b, s.batch, 3, s.size ? s.size : 224);
    x = b.conv(x, 32, 3, 2, 1, 1, true);
    const int plan[13][2] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},  {512, 2}, {512, 1},
                             {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
    for (const auto& p : plan) {
        x = b.conv(x, x.c, 3, p[1], 1, x.c, true);  // depthwise
        x = b.conv(x, p[0], 1, 1, 0, 1, true);      // pointwise
    }
    x = b.global_sum(x);
    return b.dense(x, 1000);
}

/* A small backbone, a 1x1 head giving (id, score, x1, y1, x2, y2) for 4 anchors per
 * cell, laid out as (batch, anchors, 6), then get_valid_counts and NMS. */
cvml_tensor* ssd(Builder& b, const ModelSpec& s) {
    int size = s.size ? s.size : 128;
    Act x = make_data(b, s.batch, 3, size);
    x = b.conv(x, 32, 3, 2, 1, 1, true);
    x = b.conv(x, 64, 3, 2, 1, 1, true);
    x = b.conv(x, 128, 3, 2, 1, 1, true);
    x = b.conv(x, 128, 3, 2, 1, 1, true);
    Act h = b.conv(x, 24, 1, 1, 0, 1, false);
    int cells = h.h * h.w;
    cvml_tensor* r = b.node(
        "reshape",
        {{"shape", "(" + std::to_string(s.batch) + ", 4, 6, " + std::to_string(cells) + ")"}},
        {h.t});
    r = b.node("transpose", {{"axes", "(0, 1, 3, 2)"}}, {r});
    r = b.node(
        "reshape",
        {{"shape", "(" + std::to_string(s.batch) + ", " + std::to_string(4 * cells) + ", 6)"}},
        {r});
    cvml_tensor* boxes = nullptr;
    cvml_tensor* count = b.node("get_valid_counts", {{"score_threshold", "0"}}, {r}, 2, &boxes);
    return b.node("non_max_suppression",
                  {{"iou_threshold", "50"},
                   {"force_suppress", "False"},
                   {"top_k", "-1"},
                   {"max_output_size", "-1"},
                   {"return_indices", "False"},
                   {"invalid_to_bottom", "True"},
                   {"coord_start", "2"},
                   {"score_index", "1"},
                   {"id_index", "0"}},
                  {boxes, count});
}

}  // namespace

std::vector<std::string> model_names() {
    return {"resnet18", "mobilenet", "ssd"};
}

int build_model(cvml_context* ctx, const ModelSpec& spec, cvml_graph** out, std::string* error) {
    *out = nullptr;
    cvml_graph* g = nullptr;
    int rc = cvml_graph_create(ctx, &g);
    if (rc) {
        *error = cvml_last_error();
        return rc;
    }
    Builder b(g, spec.seed);
    cvml_tensor* y = nullptr;
    if (spec.name == "resnet18")
        y = resnet18(b, spec);
    else if (spec.name == "mobilenet")
        y = mobilenet(b, spec);
    else if (spec.name == "ssd")
        y = ssd(b, spec);
    else {
        cvml_graph_release(g);
        *error = "unknown model '" + spec.name + "'";
        return CVML_ERR_LOGIC;
    }
    rc = b.rc();
    if (!rc) rc = cvml_graph_set_outputs(g, &y, 1);
    if (!rc) rc = cvml_graph_verify(g);
    if (rc) {
        *error = b.rc() ? b.error() : cvml_last_error();
        cvml_graph_release(g);
        return rc;
    }
    *out = g;
    return CVML_OK;
}

std::vector<int32_t> make_input(cvml_graph* g, uint32_t seed) {
    cvml_tensor* in = nullptr;
    std::vector<int32_t> v;
    if (cvml_graph_get_input(g, 0, &in)) return v;
    size_t n = 0;
    int p = 8;
    cvml_tensor_element_count(in, &n);
    cvml_tensor_precision(in, &p);
    int32_t bound = p >= 32 ? INT32_MAX : (int32_t)((1u << (p - 1)) - 1u);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> d(-bound, bound);
    v.resize(n);
    for (auto& x : v) x = d(rng);
    return v;
}

}  // namespace bench
