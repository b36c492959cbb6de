/* Linked into a test plugin DLL that declares the wrong ABI version: its DllMain ends the
 * process with exit code 42. The loader must refuse the DLL without ever running it, so
 * a host that survives loading it (scripts/test_windows.sh) proves the declaration is
 * read before any of the plugin's code runs. */
#include <windows.h>

extern "C" BOOL WINAPI DllMain(HINSTANCE, DWORD reason, LPVOID) {
    if (reason == DLL_PROCESS_ATTACH) ExitProcess(42);
    return TRUE;
}
