# Operator definitions, one file per operator (see op_def.h). Adding an operator means
# adding its file here; the registry is generated from this list.
set(CVML_OPERATOR_SOURCES
  relu.cpp
)
# Shared helpers (not registered).
set(CVML_OPERATOR_SUPPORT_SOURCES
  op_def.cpp
  op_common.cpp
)
