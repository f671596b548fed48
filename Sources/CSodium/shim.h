#ifndef CSODIUM_SHIM_H
#define CSODIUM_SHIM_H
#include <sodium.h>
#endif
