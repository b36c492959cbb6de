/* Shared pieces of the cvml tool: errors and exit codes, argument parsing, model
 * resolution and loading, input and output files, a small JSON writer. */
#pragma once

#include <stdint.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "cvml.h"

namespace cli {

/* Exit codes: the library's status classes, and sysexits' EX_USAGE for bad syntax. */
enum Exit { kOk = 0, kLogic = 1, kRuntime = 2, kUsage = 64 };

/* Every failure is thrown as an Error and printed as one line by main(). */
struct Error : std::runtime_error {
    int code;
    Error(int c, const std::string& message) : std::runtime_error(message), code(c) {}
};
[[noreturn]] void usage_error(const std::string& message);
/* Throws with the library's message when `rc` is not CVML_OK. */
void check(int rc, const std::string& what);

/* ---- arguments ---------------------------------------------------------------------- */

struct OptionSpec {
    const char* name; /* "--input" */
    bool takes_value;
    bool repeatable;
};

/* Parsed arguments: options by name (repeatable ones keep every value) and positionals. */
struct Args {
    std::map<std::string, std::vector<std::string>> options;
    std::vector<std::string> positionals;
    bool has(const std::string& name) const { return options.count(name) != 0; }
    std::string get(const std::string& name, const std::string& fallback = "") const;
    std::vector<std::string> all(const std::string& name) const;
};

/* Parses argv after the subcommand. Returns false when --help was asked for. */
bool parse_args(int argc, char** argv, const std::vector<OptionSpec>& specs, Args* out);
int parse_int(const std::string& option, const std::string& value, int lo, int hi);

/* ---- models ------------------------------------------------------------------------- */

/* ModelPaths.layout of a compiled plan (NAME.cvmc): graph is the plan, params empty. */
constexpr const char kCompiledLayout[] = "compiled plan (NAME.cvmc)";

struct ModelPaths;
/* Fails with a logic error when MODEL is a compiled plan: `what` needs the model's
 * nodes, which a plan does not keep. */
void refuse_compiled(const ModelPaths& paths, const std::string& what);

struct ModelPaths {
    std::string graph;
    std::string params;
    std::string layout; /* how the paths were found, for `info` */
};

/* MODEL is a directory (model.json + model.params, or symbol + params), a graph file
 * (with PARAMS, or its sibling NAME.params, or `params` beside `symbol`), or a prefix
 * (PREFIX.json + PREFIX.params). `params` overrides the params path when not empty. */
ModelPaths resolve_model(const std::string& model, const std::string& params);

std::vector<uint8_t> read_file(const std::string& path, const std::string& what);
void write_file(const std::string& path, const void* data, size_t size, const std::string& what);

/* The library for the duration of a command. */
struct Library {
    Library();
    ~Library();
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
};

struct Context {
    cvml_context* ctx = nullptr;
    Context();
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
    /* Applies --threads and --device (comma-separated or repeated) options. */
    void configure(const Args& args);
};

struct Graph {
    cvml_graph* g = nullptr;
    Graph() = default;
    ~Graph();
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
};

/* A loaded model (verified by the serializer). `keep_bytes` loads from memory and
 * keeps the files' bytes for callers that need them again (upstream's API in `info`);
 * otherwise the library reads the files itself, streaming the params as the file API
 * does, so a run holds no second copy of the weights. */
struct LoadedModel {
    ModelPaths paths;
    std::vector<uint8_t> graph_bytes; /* or a compiled plan's */
    std::vector<uint8_t> params_bytes;
    std::vector<uint8_t> arena; /* a compiled plan's (cvml_graph_load_compiled) */
    Graph graph;
};
enum class KeepBytes { kNo, kYes };
void load_model(Context& ctx, const ModelPaths& paths, LoadedModel* out,
                KeepBytes keep = KeepBytes::kNo);

/* ---- tensors and files -------------------------------------------------------------- */

/* Values with a shape, as read from or written to .npy, text or raw files. */
struct Array {
    std::vector<int64_t> values;
    std::vector<int64_t> shape; /* as the file gives it (a count alone: one dimension) */
    bool shaped = false;        /* the file states a shape (.npy, or text with NDIM) */
};

enum class Format { kAuto, kRaw, kNpy, kText };
Format parse_format(const std::string& option, const std::string& name);

/* Reads an input or expected-output file. Raw files are returned as bytes in `raw`
 * with `is_raw` set; npy and text files as values. With Format::kAuto the extension
 * decides (.npy, .txt/.text, .bin/.raw), then the size: a file of exactly
 * `raw_length` bytes is raw even when its bytes happen to begin like a .npy header
 * (raw int8 input can), and only then the .npy magic. */
struct FileData {
    bool is_raw = false;
    bool guessed = false; /* the format came from the content, not an extension or option */
    std::vector<uint8_t> raw;
    Array array;
};
FileData read_data_file(const std::string& path, Format format, const std::string& format_option,
                        const std::string& what, size_t raw_length);

/* Converts values to upstream's bytes with element size 1 (int8) or 4 (int32 LE),
 * failing (logic) on a value that does not fit. */
std::vector<uint8_t> to_bytes(const Array& a, int type_size, const std::string& what);
std::vector<int64_t> from_bytes(const std::vector<uint8_t>& bytes, int type_size);

std::vector<uint8_t> npy_encode(const std::vector<uint8_t>& bytes, int type_size,
                                const std::vector<int64_t>& shape);
std::string text_values(const std::vector<int64_t>& values);

/* ---- JSON --------------------------------------------------------------------------- */

std::string json_string(const std::string& s);

/* Builds JSON text with indentation; values are written in the order they are added. */
class Json {
  public:
    Json& begin_object(const std::string& key = "");
    Json& end_object();
    Json& begin_array(const std::string& key = "");
    Json& end_array();
    Json& value(const std::string& key, const std::string& v);
    Json& value(const std::string& key, const char* v) { return value(key, std::string(v)); }
    Json& value(const std::string& key, int64_t v);
    Json& value(const std::string& key, uint64_t v);
    Json& value(const std::string& key, int v) { return value(key, static_cast<int64_t>(v)); }
    Json& value(const std::string& key, double v);
    Json& value(const std::string& key, bool v);
    Json& raw(const std::string& key, const std::string& json);
    std::string str() const { return out_ + "\n"; }

  private:
    void prefix(const std::string& key);
    std::string out_;
    std::vector<bool> first_{true};
};

/* Where the last directory separator of `p` is (npos where none): '/' everywhere, and
 * '\\' too on Windows. */
size_t last_separator(const std::string& p);

}  // namespace cli

/* Subcommands: each returns an exit code or throws cli::Error. */
int cmd_info(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_validate(int argc, char** argv);
int cmd_devices(int argc, char** argv);
int cmd_save(int argc, char** argv);
