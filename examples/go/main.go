// Command cvmlrun runs a CVM model through libcvml.so, loaded at run time with
// dlopen the way the Cortex full node loads its inference runtime, so the node binary
// does not link the library and picks the runtime by path. On Windows it loads
// cvml.dll with LoadLibrary the same way (docs/windows.md).
//
//	cvmlrun -lib /usr/local/lib/libcvml.so GRAPH.json GRAPH.params INPUT.bin
//	cvmlrun.exe -lib C:\cvml\bin\cvml.dll GRAPH.json GRAPH.params INPUT.bin
package main

/*
#cgo !windows LDFLAGS: -ldl
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct cvml_context cvml_context;
typedef struct cvml_graph cvml_graph;

#ifdef _WIN32
#include <windows.h>

static HMODULE cvml_lib;

static const char* lib_open(const char* path) {
	static char message[64];
	cvml_lib = LoadLibraryA(path);
	if (cvml_lib) return NULL;
	snprintf(message, sizeof message, "LoadLibrary failed: Windows error %lu",
	         (unsigned long)GetLastError());
	return message;
}

static void* lib_sym(const char* name) {
	return cvml_lib ? (void*)GetProcAddress(cvml_lib, name) : NULL;
}
#else
#include <dlfcn.h>

static void* cvml_lib;

static const char* lib_open(const char* path) {
	cvml_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	return cvml_lib ? NULL : dlerror();
}

static void* lib_sym(const char* name) { return cvml_lib ? dlsym(cvml_lib, name) : NULL; }
#endif

// Go cannot call C function pointers; these trampolines do.
static int call_void(void* f) { return ((int (*)(void))f)(); }
static const char* call_str(void* f) { return ((const char* (*)(void))f)(); }
static int call_ctx_create(void* f, cvml_context** out) {
	return ((int (*)(cvml_context**))f)(out);
}
static int call_ptr(void* f, void* p) { return ((int (*)(void*))f)(p); }
static int call_load(void* f, cvml_context* ctx, const void* g, size_t gs, const void* p,
                     size_t ps, cvml_graph** out) {
	return ((int (*)(cvml_context*, const char*, const void*, size_t, const void*, size_t,
	                 cvml_graph**))f)(ctx, "cvm", g, gs, p, ps, out);
}
static int call_gas(void* f, cvml_graph* g, uint64_t* gas) {
	return ((int (*)(const cvml_graph*, uint64_t*))f)(g, gas);
}
static int call_bytes(void* f, cvml_graph* g, size_t* len, int* type_size) {
	return ((int (*)(const cvml_graph*, size_t*, int*))f)(g, len, type_size);
}
static int call_run(void* f, cvml_graph* g, const void* in, size_t in_len, void* out,
                    size_t out_len) {
	return ((int (*)(cvml_graph*, const void*, size_t, void*, size_t))f)(g, in, in_len, out,
	                                                                      out_len);
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"unsafe"
)

// Status classes of the C API (upstream CVM's numbers).
const (
	statusLogic   = 1
	statusRuntime = 2
)

// Error carries the library's status and message.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	class := "runtime"
	if e.Status == statusLogic {
		class = "logic"
	}
	return fmt.Sprintf("%s (%s error)", e.Message, class)
}

type library struct{ syms map[string]unsafe.Pointer }

func open(path string) (*library, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if msg := C.lib_open(cpath); msg != nil {
		return nil, errors.New(C.GoString(msg))
	}
	lib := &library{syms: map[string]unsafe.Pointer{}}
	for _, name := range []string{"cvml_init", "cvml_release", "cvml_last_error", "cvml_version",
		"cvml_context_create", "cvml_context_release", "cvml_graph_load_memory",
		"cvml_graph_release", "cvml_graph_gas", "cvml_graph_input_bytes",
		"cvml_graph_output_bytes", "cvml_graph_run_bytes"} {
		cname := C.CString(name)
		p := C.lib_sym(cname)
		C.free(unsafe.Pointer(cname))
		if p == nil {
			return nil, fmt.Errorf("%s: symbol %s not found", path, name)
		}
		lib.syms[name] = p
	}
	return lib, nil
}

func (l *library) check(rc C.int, what string) error {
	if rc == 0 {
		return nil
	}
	msg := C.GoString(C.call_str(l.syms["cvml_last_error"]))
	return &Error{Status: int(rc), Message: what + ": " + msg}
}

// ptr passes a Go slice to C: cgo allows it because the slice holds no Go pointers
// and the library only reads the buffer during the call.
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return unsafe.Pointer(&[]byte{0}[0])
	}
	return unsafe.Pointer(&b[0])
}

func run(l *library, graph, params, input []byte) (uint64, []int64, error) {
	if err := l.check(C.call_void(l.syms["cvml_init"]), "init"); err != nil {
		return 0, nil, err
	}
	defer C.call_void(l.syms["cvml_release"])
	var ctx *C.cvml_context
	if err := l.check(C.call_ctx_create(l.syms["cvml_context_create"], &ctx), "context"); err != nil {
		return 0, nil, err
	}
	defer C.call_ptr(l.syms["cvml_context_release"], unsafe.Pointer(ctx))
	var g *C.cvml_graph
	rc := C.call_load(l.syms["cvml_graph_load_memory"], ctx, ptr(graph), C.size_t(len(graph)),
		ptr(params), C.size_t(len(params)), &g)
	if err := l.check(rc, "load"); err != nil {
		return 0, nil, err
	}
	defer C.call_ptr(l.syms["cvml_graph_release"], unsafe.Pointer(g))
	var gas C.uint64_t
	if err := l.check(C.call_gas(l.syms["cvml_graph_gas"], g, &gas), "gas"); err != nil {
		return 0, nil, err
	}
	var outLen C.size_t
	var outType C.int
	if err := l.check(C.call_bytes(l.syms["cvml_graph_output_bytes"], g, &outLen, &outType), "output size"); err != nil {
		return 0, nil, err
	}
	// C memory for the output: the library writes into it during the call.
	out := C.malloc(outLen + 1)
	defer C.free(out)
	rc = C.call_run(l.syms["cvml_graph_run_bytes"], g, ptr(input), C.size_t(len(input)), out, outLen)
	if err := l.check(rc, "inference"); err != nil {
		return 0, nil, err
	}
	raw := C.GoBytes(out, C.int(outLen))
	values := make([]int64, 0, len(raw)/int(outType))
	for i := 0; i+int(outType) <= len(raw); i += int(outType) {
		if outType == 1 {
			values = append(values, int64(int8(raw[i])))
		} else {
			values = append(values, int64(int32(binary.LittleEndian.Uint32(raw[i:]))))
		}
	}
	return uint64(gas), values, nil
}

func main() {
	libPath := flag.String("lib", "libcvml.so", "path of the cvm-lite shared library")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: cvmlrun [-lib libcvml.so] GRAPH.json GRAPH.params INPUT.bin")
	}
	flag.Parse()
	if flag.NArg() != 3 {
		flag.Usage()
		os.Exit(64)
	}
	files := make([][]byte, 3)
	for i := range files {
		data, err := os.ReadFile(flag.Arg(i))
		if err != nil {
			fmt.Fprintln(os.Stderr, "cvmlrun:", err)
			os.Exit(1)
		}
		files[i] = data
	}
	lib, err := open(*libPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cvmlrun: cannot load the runtime:", err)
		os.Exit(2)
	}
	gas, values, err := run(lib, files[0], files[1], files[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "cvmlrun:", err)
		var e *Error
		if errors.As(err, &e) {
			os.Exit(e.Status)
		}
		os.Exit(2)
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprint(v)
	}
	fmt.Printf("gas %d\n%s\n", gas, strings.Join(parts, " "))
}
