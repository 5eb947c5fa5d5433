/* Compiled as C99 with -Wall -Wextra -Werror -pedantic: les.h must be plain C. */
#include <les/les.h>

int les_header_c99_check(void);
int les_header_c99_check(void) { return LES_VERSION_NUMERIC >= 100 ? (int)LES_OK : (int)LES_ERR_INTERNAL; }
