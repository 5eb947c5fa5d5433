/* Umbrella header of the CLes module: the installed LES C API. */
#include <les/les.h>
