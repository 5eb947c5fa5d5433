/*
 * les_common.h: what every part of the LES C ABI shares: the export macro,
 * the API version, status codes, the thread-local last error, logging types
 * and the opaque handle types. Included by every other les_*.h; users include
 * <les/les.h>, which includes them all.
 *
 * Thread-safety: every function declared here is thread-safe.
 */
#ifndef LES_COMMON_H
#define LES_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  if defined(LES_BUILDING_LIBRARY)
#    define LES_API __declspec(dllexport)
#  else
#    define LES_API __declspec(dllimport)
#  endif
#else
#  define LES_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* API version (semantic versioning of this header). */
#define LES_VERSION_MAJOR 0
#define LES_VERSION_MINOR 2
#define LES_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, for preprocessor comparisons. */
#define LES_VERSION_NUMERIC (LES_VERSION_MAJOR * 10000 + LES_VERSION_MINOR * 100 + LES_VERSION_PATCH)

/* Status codes. 0 is success; errors are negative and grouped:
 * -1..-99 argument, -100..-199 I/O, -200..-299 format, -300..-399 resource,
 * -400..-499 state, -900.. internal. */
typedef enum les_status {
  LES_OK = 0,
  LES_ERR_INVALID_ARGUMENT = -1, /* null handle, out-of-range token id, bad struct size */
  LES_ERR_IO = -100,             /* open/read failed, short read, EIO */
  LES_ERR_FORMAT = -200,         /* malformed file (GGUF structure, bounds, types) */
  LES_ERR_UNSUPPORTED = -201,    /* valid input this build does not handle */
  LES_ERR_OUT_OF_MEMORY = -300,  /* allocation or memory budget exhausted */
  LES_ERR_CONTEXT_FULL = -400,   /* no room left in the context (KV cache) */
  LES_ERR_CANCELLED = -401,      /* stopped by a callback or another thread */
  LES_ERR_INTERNAL = -900        /* a bug in LES */
} les_status;

/* The library's version as "MAJOR.MINOR.PATCH". Static storage; never free.
 * Thread-safe. */
LES_API const char *les_version(void);

/* True when the library linked at run time is version major.minor or newer,
 * i.e. (LES_VERSION_MAJOR, LES_VERSION_MINOR) >= (major, minor). Thread-safe. */
LES_API bool les_version_at_least(int major, int minor);

/* Short English name of a status ("ok", "format error", ...). Static storage.
 * Unknown values give "unknown status". Thread-safe. */
LES_API const char *les_status_name(les_status status);

/* The calling thread's last error message, set by the most recent failing LES
 * call on this thread; "" if none. Valid until the next LES call on this
 * thread. Thread-safe (thread-local storage). */
LES_API const char *les_last_error(void);

/* ------------------------------------------------------------------------
 * Logging
 * ------------------------------------------------------------------------ */

typedef enum les_log_level {
  LES_LOG_DEBUG = 0,
  LES_LOG_INFO = 1,
  LES_LOG_WARN = 2,
  LES_LOG_ERROR = 3
} les_log_level;

/* Receives one formatted log line (no trailing newline; `msg` is borrowed for
 * the duration of the call). Called on whichever thread logs. */
typedef void (*les_log_callback)(les_log_level level, const char *msg, void *user_data);

/* ------------------------------------------------------------------------
 * Opaque handles and the token id
 * ------------------------------------------------------------------------ */

typedef struct les_model les_model;     /* les_model.h */
typedef struct les_context les_context; /* les_context.h */
typedef struct les_vision les_vision;   /* les_vision.h: a vision encoder bound to one text model */
typedef struct les_image les_image;     /* les_vision.h: one encoded image (embedding rows, layout) */

/* A token id: an index into the model's vocabulary (0 .. les_model_n_vocab() - 1). */
typedef int32_t les_token;

#ifdef __cplusplus
}
#endif

#endif /* LES_COMMON_H */
