/*
 * dynlib.h - load a shared library and look up its functions, on Linux
 * (dlopen) and on Windows (LoadLibrary), so that the C test programs in
 * tests/c drive an FMU's .so and its .dll (under Wine) with the same code.
 */
#ifndef DYNLIB_H
#define DYNLIB_H

#ifdef _WIN32
#include <stdio.h>
#include <string.h>
#include <windows.h>

typedef HMODULE dynlib;

static dynlib dynlib_open(const char *path) { return LoadLibraryA(path); }

/* FARPROC to a plain pointer, as dlsym returns it; the callers cast it to the function's type. */
static void *dynlib_symbol(dynlib lib, const char *name)
{
    void *p;
    FARPROC f = GetProcAddress(lib, name);
    memcpy(&p, &f, sizeof p);
    return p;
}

static void dynlib_close(dynlib lib) { FreeLibrary(lib); }

static const char *dynlib_error(void)
{
    static char text[40];
    snprintf(text, sizeof text, "Windows error %lu", (unsigned long)GetLastError());
    return text;
}
#else
#include <dlfcn.h>

typedef void *dynlib;

static dynlib dynlib_open(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static void *dynlib_symbol(dynlib lib, const char *name) { return dlsym(lib, name); }
static void dynlib_close(dynlib lib) { dlclose(lib); }
static const char *dynlib_error(void) { return dlerror(); }
#endif

#endif
