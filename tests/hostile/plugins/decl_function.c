/* A library whose plugin declaration is a function: refused, never read as data. */
__attribute__((visibility("default"))) int cvml_plugin_declaration(void);
int cvml_plugin_declaration(void) {
    return 1;
}

__attribute__((visibility("default"))) int cvml_plugin_entry(const void* host);
int cvml_plugin_entry(const void* host) {
    (void)host;
    return 0;
}
