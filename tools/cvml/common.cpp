#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cli.h"

namespace cli {

void usage_error(const std::string& message) {
    throw Error(kUsage, message);
}

void check(int rc, const std::string& what) {
    if (rc == CVML_OK) return;
    std::string msg = cvml_last_error();
    throw Error(rc == CVML_ERR_LOGIC ? kLogic : kRuntime,
                what + (msg.empty() ? "" : ": " + msg) +
                    (rc == CVML_ERR_LOGIC ? " (logic error)" : " (runtime error)"));
}

/* ---- arguments ---------------------------------------------------------------------- */

std::string Args::get(const std::string& name, const std::string& fallback) const {
    auto it = options.find(name);
    return it == options.end() || it->second.empty() ? fallback : it->second.back();
}

std::vector<std::string> Args::all(const std::string& name) const {
    auto it = options.find(name);
    return it == options.end() ? std::vector<std::string>() : it->second;
}

bool parse_args(int argc, char** argv, const std::vector<OptionSpec>& specs, Args* out) {
    bool only_positionals = false;
    for (int i = 0; i < argc; ++i) {
        std::string a = argv[i];
        if (only_positionals || a.size() < 2 || a[0] != '-') {
            out->positionals.push_back(a);
            continue;
        }
        if (a == "--") {
            only_positionals = true;
            continue;
        }
        if (a == "-h" || a == "--help") return false;
        std::string name = a, value;
        bool inline_value = false;
        size_t eq = a.find('=');
        if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
            name = a.substr(0, eq);
            value = a.substr(eq + 1);
            inline_value = true;
        }
        const OptionSpec* spec = nullptr;
        for (const auto& s : specs)
            if (name == s.name) spec = &s;
        if (!spec) usage_error("unknown option '" + name + "'");
        if (spec->takes_value) {
            if (!inline_value) {
                if (i + 1 >= argc) usage_error("option '" + name + "' needs a value");
                value = argv[++i];
            }
        } else if (inline_value) {
            usage_error("option '" + name + "' takes no value");
        }
        auto& slot = out->options[name];
        if (!slot.empty() && !spec->repeatable)
            usage_error("option '" + name + "' given more than once");
        slot.push_back(value);
    }
    return true;
}

int parse_int(const std::string& option, const std::string& value, int lo, int hi) {
    errno = 0;
    char* end = nullptr;
    long v = strtol(value.c_str(), &end, 10);
    if (value.empty() || *end || errno || v < lo || v > hi)
        usage_error("option '" + option + "' expects an integer in " + std::to_string(lo) + ".." +
                    std::to_string(hi) + ", got '" + value + "'");
    return static_cast<int>(v);
}

/* ---- files -------------------------------------------------------------------------- */

size_t last_separator(const std::string& p) {
#ifdef _WIN32
    return p.find_last_of("/\\");  // both separate paths on Windows: C:\models\x/y
#else
    return p.find_last_of('/');
#endif
}

namespace {

bool is_dir(const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

std::string dirname_of(const std::string& p) {
    size_t slash = last_separator(p);
    return slash == std::string::npos ? "." : (slash == 0 ? p.substr(0, 1) : p.substr(0, slash));
}

std::string basename_of(const std::string& p) {
    size_t slash = last_separator(p);
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    return s;
}

/* True when the file begins with the params dictionary's magic number (little-endian
 * 0xF7E58D4F05049CB7): a params file given where a graph belongs. */
bool has_params_magic(const std::string& path) {
    static const uint8_t kMagic[8] = {0xB7, 0x9C, 0x04, 0x05, 0x4F, 0x8D, 0xE5, 0xF7};
    uint8_t head[8];
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) return false;
    bool hit = fread(head, 1, sizeof head, f) == sizeof head && memcmp(head, kMagic, 8) == 0;
    fclose(f);
    return hit;
}

/* The graph beside a params file: `params` -> `symbol`, NAME.params -> NAME.json. */
std::string graph_beside_params(const std::string& params) {
    std::string base = basename_of(params), dir = dirname_of(params) + "/";
    if (base == "params") return dir + "symbol";
    if (ends_with(base, ".params")) return params.substr(0, params.size() - 7) + ".json";
    return "";
}

}  // namespace

ModelPaths resolve_model(const std::string& model, const std::string& params) {
    ModelPaths p;
    if (model.empty()) usage_error("missing MODEL");
    if (is_dir(model)) {
        std::string d = ends_with(model, "/") ? model : model + "/";
        if (is_file(d + "model.json")) {
            p = {d + "model.json", d + "model.params", "directory (model.json + model.params)"};
        } else if (is_file(d + "symbol")) {
            p = {d + "symbol", d + "params", "directory (symbol + params)"};
        } else {
            throw Error(kLogic, "directory '" + model +
                                    "' holds neither model.json nor symbol (see 'cvml --help')");
        }
    } else if (is_file(model)) {
        std::string base = basename_of(model), dir = dirname_of(model) + "/";
        if (has_params_magic(model)) {
            /* MODEL/params or NAME.params: the user meant the model it belongs to. */
            std::string graph = graph_beside_params(model);
            if (graph.empty() || !is_file(graph))
                throw Error(kLogic, "'" + model +
                                        "' is a params file, not a graph: give the graph file "
                                        "or the model's directory");
            p = {graph, model, "files (graph beside the params file given)"};
        } else if (ends_with(base, ".cvmc")) {
            p = {model, "", kCompiledLayout};
        } else if (base == "symbol") {
            p = {model, dir + "params", "files (symbol + params)"};
        } else if (ends_with(base, ".json")) {
            p = {model, model.substr(0, model.size() - 5) + ".params",
                 "files (NAME.json + NAME.params)"};
        } else {
            p = {model, model + ".params", "files (graph + NAME.params)"};
        }
    } else if (is_file(model + ".json")) {
        p = {model + ".json", model + ".params", "prefix (PREFIX.json + PREFIX.params)"};
    } else {
        throw Error(kLogic, "model '" + model +
                                "' not found: expected a directory, a graph file or a prefix "
                                "with PREFIX.json");
    }
    if (!params.empty()) {
        p.params = params;
        p.layout = "files (graph + params given)";
    }
    return p;
}

std::vector<uint8_t> read_file(const std::string& path, const std::string& what) {
    if (is_dir(path)) throw Error(kLogic, what + " '" + path + "' is a directory");
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) throw Error(kLogic, "cannot open " + what + " '" + path + "': " + strerror(errno));
    std::vector<uint8_t> data;
    uint8_t buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + n);
    bool failed = ferror(f) != 0;
    fclose(f);
    if (failed) throw Error(kRuntime, "cannot read " + what + " '" + path + "'");
    return data;
}

void write_file(const std::string& path, const void* data, size_t size, const std::string& what) {
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) throw Error(kRuntime, "cannot write " + what + " '" + path + "': " + strerror(errno));
    bool ok = size == 0 || fwrite(data, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (!ok) throw Error(kRuntime, "cannot write " + what + " '" + path + "'");
}

/* ---- library objects ---------------------------------------------------------------- */

Library::Library() {
    check(cvml_init(), "cannot initialise the library");
}
Library::~Library() {
    cvml_release();
}

Context::Context() {
    check(cvml_context_create(&ctx), "cannot create a context");
}
Context::~Context() {
    if (ctx) cvml_context_release(ctx);
}

void Context::configure(const Args& args) {
    for (const auto& path : args.all("--plugin"))
        check(cvml_load_plugin(path.c_str()), "cannot load plugin '" + path + "'");
    if (args.has("--threads"))
        check(cvml_context_set_threads(ctx, parse_int("--threads", args.get("--threads"), 1, 256)),
              "cannot set threads");
    std::vector<std::string> names;
    for (const auto& v : args.all("--device")) {
        std::stringstream ss(v);
        std::string item;
        while (std::getline(ss, item, ','))
            if (!item.empty()) names.push_back(item);
    }
    if (args.has("--device") && names.empty()) usage_error("option '--device' needs a name");
    if (!names.empty()) {
        std::vector<const char*> ptrs;
        for (const auto& n : names) ptrs.push_back(n.c_str());
        int rc = cvml_context_set_devices(ctx, ptrs.data(), static_cast<int>(ptrs.size()));
        if (rc)
            check(rc, "cannot use device(s) '" + args.get("--device") + "' (see 'cvml devices')");
    }
}

Graph::~Graph() {
    if (g) cvml_graph_release(g);
}

/* Fails as read_file() would (a logic error naming the file) before the library is
 * handed a path, so a missing file has the same class with either load path. */
void check_readable(const std::string& path, const std::string& what) {
    if (is_dir(path)) throw Error(kLogic, what + " '" + path + "' is a directory");
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) throw Error(kLogic, "cannot open " + what + " '" + path + "': " + strerror(errno));
    fclose(f);
}

void refuse_compiled(const ModelPaths& paths, const std::string& what) {
    if (paths.layout == kCompiledLayout)
        throw Error(kLogic, "'" + paths.graph + "' is a compiled plan, which keeps no nodes: " +
                                what + " needs the model's CVM files");
}

/* A compiled plan (cvml save --compiled), its arena sized by the library. */
void load_compiled(Context& ctx, const ModelPaths& paths, LoadedModel* out) {
    out->graph_bytes = read_file(paths.graph, "compiled plan");
    size_t need = 0;
    check(cvml_graph_compiled_arena_bytes(out->graph_bytes.data(), out->graph_bytes.size(), &need),
          "cannot load '" + paths.graph + "'");
    out->arena.assign(need, 0);
    check(cvml_graph_load_compiled(ctx.ctx, out->graph_bytes.data(), out->graph_bytes.size(),
                                   out->arena.data(), out->arena.size(), &out->graph.g),
          "cannot load '" + paths.graph + "'");
}

void load_model(Context& ctx, const ModelPaths& paths, LoadedModel* out, KeepBytes keep) {
    out->paths = paths;
    if (paths.layout == kCompiledLayout) return load_compiled(ctx, paths, out);
    int rc;
    if (keep == KeepBytes::kNo) {
        check_readable(paths.graph, "graph file");
        check_readable(paths.params, "params file");
        rc = cvml_graph_load_file(ctx.ctx, "cvm", paths.graph.c_str(), paths.params.c_str(),
                                  &out->graph.g);
    } else {
        out->graph_bytes = read_file(paths.graph, "graph file");
        out->params_bytes = read_file(paths.params, "params file");
        static const uint8_t empty = 0;
        rc = cvml_graph_load_memory(
            ctx.ctx, "cvm", out->graph_bytes.empty() ? &empty : out->graph_bytes.data(),
            out->graph_bytes.size(), out->params_bytes.empty() ? &empty : out->params_bytes.data(),
            out->params_bytes.size(), &out->graph.g);
    }
    check(rc, "cannot load '" + paths.graph + "'");
}

/* ---- data files --------------------------------------------------------------------- */

Format parse_format(const std::string& option, const std::string& name) {
    if (name == "auto") return Format::kAuto;
    if (name == "raw" || name == "bin") return Format::kRaw;
    if (name == "npy") return Format::kNpy;
    if (name == "text" || name == "txt") return Format::kText;
    usage_error("option '" + option + "' expects raw, npy, text or auto, got '" + name + "'");
}

namespace {

const char kNpyMagic[] = "\x93NUMPY";

/* Finds the value text of `'key':` in a .npy header dict. */
std::string npy_field(const std::string& header, const std::string& key, const std::string& path) {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos)
        throw Error(kLogic, "npy file '" + path + "': no '" + key + "' in header");
    size_t colon = header.find(':', k);
    if (colon == std::string::npos) throw Error(kLogic, "npy file '" + path + "': bad header");
    size_t start = header.find_first_not_of(' ', colon + 1);
    if (start == std::string::npos) throw Error(kLogic, "npy file '" + path + "': bad header");
    if (header[start] == '(') {
        size_t end = header.find(')', start);
        if (end == std::string::npos) throw Error(kLogic, "npy file '" + path + "': bad shape");
        return header.substr(start, end - start + 1);
    }
    if (header[start] == '\'') {
        size_t end = header.find('\'', start + 1);
        if (end == std::string::npos) throw Error(kLogic, "npy file '" + path + "': bad header");
        return header.substr(start + 1, end - start - 1);
    }
    size_t end = header.find_first_of(",}", start);
    return header.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

Array parse_npy(const std::vector<uint8_t>& d, const std::string& path) {
    auto bad = [&](const std::string& why) {
        return Error(kLogic, "npy file '" + path + "': " + why);
    };
    if (d.size() < 10 || memcmp(d.data(), kNpyMagic, 6) != 0) throw bad("not a .npy file");
    int major = d[6];
    size_t header_len, offset;
    if (major == 1) {
        header_len = d[8] | (d[9] << 8);
        offset = 10;
    } else if (major == 2 || major == 3) {
        if (d.size() < 12) throw bad("truncated header");
        header_len = d[8] | (d[9] << 8) | (d[10] << 16) | (static_cast<size_t>(d[11]) << 24);
        offset = 12;
    } else {
        throw bad("unsupported version " + std::to_string(major));
    }
    if (d.size() < offset + header_len) throw bad("truncated header");
    std::string header(reinterpret_cast<const char*>(d.data() + offset), header_len);
    std::string descr = npy_field(header, "descr", path);
    std::string fortran = npy_field(header, "fortran_order", path);
    std::string shape_text = npy_field(header, "shape", path);
    if (fortran != "False") throw bad("fortran_order arrays are not supported");
    char order = descr.empty() ? '?' : descr[0];
    std::string code = (order == '<' || order == '|' || order == '=') ? descr.substr(1) : descr;
    if (order == '>' && code != ">i1" && code != ">u1")
        throw bad("big-endian data is not supported");
    int size;
    bool is_signed;
    if (code == "i1" || code == "b")
        size = 1, is_signed = true;
    else if (code == "u1" || code == "B")
        size = 1, is_signed = false;
    else if (code == "i2")
        size = 2, is_signed = true;
    else if (code == "u2")
        size = 2, is_signed = false;
    else if (code == "i4")
        size = 4, is_signed = true;
    else if (code == "u4")
        size = 4, is_signed = false;
    else if (code == "i8")
        size = 8, is_signed = true;
    else
        throw bad("dtype '" + descr + "' is not an integer type (int8/16/32/64, uint8/16/32)");
    Array a;
    a.shaped = true;
    std::string inner = shape_text.substr(1, shape_text.size() - 2);
    std::stringstream ss(inner);
    std::string item;
    int64_t count = 1;
    while (std::getline(ss, item, ',')) {
        size_t s = item.find_first_not_of(' ');
        if (s == std::string::npos) continue;
        char* end = nullptr;
        long long v = strtoll(item.c_str() + s, &end, 10);
        if (v < 0 || v > (1LL << 31)) throw bad("bad shape " + shape_text);
        a.shape.push_back(v);
        count *= v;
        if (count > (1LL << 31)) throw bad("shape too large " + shape_text);
    }
    size_t body = offset + header_len;
    if (d.size() - body < static_cast<size_t>(count) * size)
        throw bad("holds " + std::to_string(d.size() - body) + " data bytes, shape " + shape_text +
                  " needs " + std::to_string(count * size));
    a.values.resize(count);
    const uint8_t* p = d.data() + body;
    for (int64_t i = 0; i < count; ++i, p += size) {
        uint64_t u = 0;
        for (int b = 0; b < size; ++b) u |= static_cast<uint64_t>(p[b]) << (8 * b);
        int64_t v;
        if (is_signed && size < 8 && (u >> (8 * size - 1)) & 1)
            v = static_cast<int64_t>(u | (~0ULL << (8 * size)));
        else
            v = static_cast<int64_t>(u);
        a.values[i] = v;
    }
    return a;
}

/* Text layouts: cpu.txt (`ndim`, the shape, the values) and result_0.txt (a count,
 * then the values). */
Array parse_text(const std::vector<uint8_t>& d, const std::string& path) {
    std::vector<int64_t> tokens;
    std::string text(d.begin(), d.end());
    size_t i = 0;
    while (i < text.size()) {
        if (isspace(static_cast<unsigned char>(text[i]))) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < text.size() && !isspace(static_cast<unsigned char>(text[j]))) ++j;
        std::string tok = text.substr(i, j - i);
        char* end = nullptr;
        errno = 0;
        long long v = strtoll(tok.c_str(), &end, 10);
        if (*end || errno)
            throw Error(kLogic, "text file '" + path + "': '" + tok + "' at token " +
                                    std::to_string(tokens.size()) + " is not an integer");
        tokens.push_back(v);
        i = j;
    }
    if (tokens.empty()) throw Error(kLogic, "text file '" + path + "' is empty");
    Array a;
    int64_t n0 = tokens[0];
    if (n0 >= 0 && static_cast<size_t>(n0) == tokens.size() - 1) {
        a.values.assign(tokens.begin() + 1, tokens.end());
        a.shape = {n0};
        return a;
    }
    if (n0 >= 1 && n0 <= CVML_MAX_DIMS && tokens.size() > static_cast<size_t>(n0)) {
        int64_t count = 1;
        for (int64_t k = 1; k <= n0; ++k) {
            if (tokens[k] < 0) count = -1;
            if (count >= 0) count *= tokens[k];
            if (count > (1LL << 31)) count = -1;
            if (count < 0) break;
        }
        if (count >= 0 && static_cast<size_t>(count) == tokens.size() - 1 - n0) {
            a.shaped = true;
            a.shape.assign(tokens.begin() + 1, tokens.begin() + 1 + n0);
            a.values.assign(tokens.begin() + 1 + n0, tokens.end());
            return a;
        }
    }
    throw Error(kLogic, "text file '" + path +
                            "' is neither 'NDIM SHAPE... VALUES...' nor 'COUNT VALUES...' (" +
                            std::to_string(tokens.size()) + " numbers)");
}

}  // namespace

namespace {

/* The format a file's name states, or kAuto when its extension says nothing. */
Format format_of_extension(const std::string& path) {
    std::string l = lower(basename_of(path));
    if (ends_with(l, ".npy")) return Format::kNpy;
    if (ends_with(l, ".txt") || ends_with(l, ".text")) return Format::kText;
    if (ends_with(l, ".bin") || ends_with(l, ".raw")) return Format::kRaw;
    return Format::kAuto;
}

/* Without an extension: the size the model expects means raw bytes (raw int8 input
 * may begin with the .npy magic by chance); otherwise the .npy magic, else raw. */
Format format_of_content(const std::vector<uint8_t>& d, size_t raw_length) {
    if (d.size() == raw_length) return Format::kRaw;
    if (d.size() >= 6 && memcmp(d.data(), kNpyMagic, 6) == 0) return Format::kNpy;
    return Format::kRaw;
}

}  // namespace

FileData read_data_file(const std::string& path, Format format, const std::string& format_option,
                        const std::string& what, size_t raw_length) {
    std::vector<uint8_t> d = read_file(path, what);
    FileData f;
    if (format == Format::kAuto) format = format_of_extension(path);
    if (format == Format::kAuto) {
        format = format_of_content(d, raw_length);
        f.guessed = true;
    }
    if (format == Format::kRaw) {
        f.is_raw = true;
        f.raw = std::move(d);
        return f;
    }
    try {
        f.array = format == Format::kNpy ? parse_npy(d, path) : parse_text(d, path);
    } catch (const Error& e) {
        if (!f.guessed) throw;
        throw Error(e.code, std::string(e.what()) + " (read as .npy by its magic bytes; " + "say " +
                                format_option + " raw if it holds raw bytes)");
    }
    return f;
}

std::vector<uint8_t> to_bytes(const Array& a, int type_size, const std::string& what) {
    std::vector<uint8_t> out(a.values.size() * type_size);
    int64_t lo = type_size == 1 ? INT8_MIN : INT32_MIN, hi = type_size == 1 ? INT8_MAX : INT32_MAX;
    for (size_t i = 0; i < a.values.size(); ++i) {
        int64_t v = a.values[i];
        if (v < lo || v > hi)
            throw Error(kLogic, what + ": value " + std::to_string(v) + " at index " +
                                    std::to_string(i) + " does not fit " +
                                    (type_size == 1 ? "int8" : "int32"));
        uint32_t u = static_cast<uint32_t>(static_cast<int32_t>(v));
        for (int b = 0; b < type_size; ++b)
            out[i * type_size + b] = static_cast<uint8_t>(u >> (8 * b));
    }
    return out;
}

std::vector<int64_t> from_bytes(const std::vector<uint8_t>& bytes, int type_size) {
    std::vector<int64_t> v(bytes.size() / type_size);
    for (size_t i = 0; i < v.size(); ++i) {
        if (type_size == 1) {
            v[i] = static_cast<int8_t>(bytes[i]);
        } else {
            uint32_t u = 0;
            for (int b = 0; b < 4; ++b) u |= static_cast<uint32_t>(bytes[i * 4 + b]) << (8 * b);
            v[i] = static_cast<int32_t>(u);
        }
    }
    return v;
}

std::vector<uint8_t> npy_encode(const std::vector<uint8_t>& bytes, int type_size,
                                const std::vector<int64_t>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i)
        s += std::to_string(shape[i]) +
             (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
    s += ")";
    std::string header = std::string("{'descr': '") + (type_size == 1 ? "|i1" : "<i4") +
                         "', 'fortran_order': False, 'shape': " + s + ", }";
    /* The whole preamble is padded to a multiple of 64 bytes, ending in '\n'. */
    size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::vector<uint8_t> out(kNpyMagic, kNpyMagic + 6);
    out.push_back(1);
    out.push_back(0);
    out.push_back(static_cast<uint8_t>(header.size() & 0xff));
    out.push_back(static_cast<uint8_t>(header.size() >> 8));
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), bytes.begin(), bytes.end());
    return out;
}

std::string text_values(const std::vector<int64_t>& values) {
    std::string s;
    for (size_t i = 0; i < values.size(); ++i) {
        if (i) s += ' ';
        s += std::to_string(values[i]);
    }
    return s;
}

/* ---- JSON --------------------------------------------------------------------------- */

std::string json_string(const std::string& s) {
    std::string o = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"':
                o += "\\\"";
                break;
            case '\\':
                o += "\\\\";
                break;
            case '\n':
                o += "\\n";
                break;
            case '\t':
                o += "\\t";
                break;
            case '\r':
                o += "\\r";
                break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    snprintf(buf, sizeof buf, "\\u%04x", c);
                    o += buf;
                } else {
                    o += static_cast<char>(c);
                }
        }
    }
    return o + "\"";
}

void Json::prefix(const std::string& key) {
    if (!first_.back()) out_ += ",";
    first_.back() = false;
    if (first_.size() > 1) out_ += "\n" + std::string(2 * (first_.size() - 1), ' ');
    if (!key.empty()) out_ += json_string(key) + ": ";
}

Json& Json::begin_object(const std::string& key) {
    prefix(key);
    out_ += "{";
    first_.push_back(true);
    return *this;
}

Json& Json::end_object() {
    bool empty = first_.back();
    first_.pop_back();
    if (!empty) out_ += "\n" + std::string(2 * (first_.size() - 1), ' ');
    out_ += "}";
    return *this;
}

Json& Json::begin_array(const std::string& key) {
    prefix(key);
    out_ += "[";
    first_.push_back(true);
    return *this;
}

Json& Json::end_array() {
    bool empty = first_.back();
    first_.pop_back();
    if (!empty) out_ += "\n" + std::string(2 * (first_.size() - 1), ' ');
    out_ += "]";
    return *this;
}

Json& Json::value(const std::string& key, const std::string& v) {
    prefix(key);
    out_ += json_string(v);
    return *this;
}

Json& Json::value(const std::string& key, int64_t v) {
    prefix(key);
    out_ += std::to_string(v);
    return *this;
}

Json& Json::value(const std::string& key, uint64_t v) {
    prefix(key);
    out_ += std::to_string(v);
    return *this;
}

Json& Json::value(const std::string& key, double v) {
    prefix(key);
    char buf[64];
    snprintf(buf, sizeof buf, "%.6g", std::isfinite(v) ? v : 0.0);
    out_ += buf;
    return *this;
}

Json& Json::value(const std::string& key, bool v) {
    prefix(key);
    out_ += v ? "true" : "false";
    return *this;
}

Json& Json::raw(const std::string& key, const std::string& json) {
    prefix(key);
    out_ += json;
    return *this;
}

}  // namespace cli
