/* The model accessors handed to plugins (cvml_host_api::ir), over the IR's structs. */
#pragma once

#include "cvml_plugin.h"

/* The library's table; static, valid for the life of the process. */
const cvml_ir_api* plugin_ir_api(void);
