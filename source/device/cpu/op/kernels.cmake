# CPU kernels, one file per operator (see ../cpu_kernel.h), registered by name.
set(CVML_CPU_KERNEL_SOURCES
  relu.cpp
)
# Shared helpers (not registered).
set(CVML_CPU_KERNEL_SUPPORT_SOURCES
)
