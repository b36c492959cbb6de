/* A library whose plugin declaration is a 1-byte object: the loader must not read it
 * as the 8-byte header (issue 18: a misaligned read past the object). */
__attribute__((visibility("default"))) const char cvml_plugin_declaration = 1;

__attribute__((visibility("default"))) int cvml_plugin_entry(const void* host);
int cvml_plugin_entry(const void* host) {
    (void)host;
    return 0;
}
