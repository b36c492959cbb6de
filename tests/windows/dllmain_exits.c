/* Linked into the C test plugin built for the next ABI major version: its DllMain ends
 * the process with exit code 42. The loader must refuse that DLL without ever running
 * it, so a host that survives loading it (scripts/test_windows.sh) proves the
 * declaration is read before any of the plugin's code runs. */
#include <windows.h>

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
    (void)instance;
    (void)reserved;
    if (reason == DLL_PROCESS_ATTACH) ExitProcess(42);
    return TRUE;
}
