/* The cvm-lite benchmark: `cvml bench ...`. */
#pragma once

/* argv[0] is "bench" (or the program name); returns the process exit status. */
int cvml_bench_main(int argc, char** argv);
