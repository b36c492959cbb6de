/* A shared library that is not a cvm-lite plugin: the loader must refuse it. */
int not_a_plugin(void);
int not_a_plugin(void) {
    return 42;
}
