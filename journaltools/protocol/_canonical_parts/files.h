/*
 * Reading journal files without the GIL: each looked up in its directory held open, stated (``stat_files``)
 * or read into one buffer whose pages are made present at once (``read_files_into``).
 *
 * Part of the one translation unit ``_canonical.c`` includes, in order (each part reads only what the parts before
 * it define).
 */

/* The directory of the paths last looked up, held open so each file is found there by its name alone: the journals
 * a reader or a listing meets one after another share a directory, and walking its whole path again cost a lookup
 * per component of every file. A path whose directory does not open is looked up whole, and meets the same error. */
typedef struct {
    int fd;
    size_t length; /* of the directory's path, its final slash included */
    char path[PATH_MAX];
} directory_cache;

#ifndef O_PATH
#define O_PATH O_RDONLY
#endif
#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; an older kernel refuses it, and the reads fault the pages in */
#endif

/* Makes the whole pages of ``buffer`` present, writable, in one call where the kernel can: a fresh buffer's reads
 * otherwise fault it in a page at a time. Here, without the GIL, rather than by the caller: a batch read ahead on
 * a thread then makes its pages while the thread that holds the GIL folds. */
static void make_present(char *buffer, Py_ssize_t length) {
#ifdef MADV_POPULATE_WRITE
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || length <= 0) return;
    uintptr_t start = ((uintptr_t)buffer + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t end = ((uintptr_t)buffer + (uintptr_t)length) & ~((uintptr_t)page - 1);
    if (end > start) (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
#else
    (void)buffer;
    (void)length;
#endif
}

/* Where ``path`` is to be looked up: the descriptor to look it up from, and the name to look up there. */
static const char *name_in(directory_cache *cache, const char *path, int *at) {
    const char *slash = strrchr(path, '/');
    size_t length = slash == NULL ? 0 : (size_t)(slash - path) + 1;
    if (length == 0 || length >= sizeof cache->path) {
        *at = AT_FDCWD;
        return path;
    }
    if (cache->length != length || memcmp(cache->path, path, length) != 0) {
        if (cache->fd >= 0) close(cache->fd);
        memcpy(cache->path, path, length);
        cache->path[length] = '\0';
        cache->length = length;
        cache->fd = open(cache->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    if (cache->fd < 0) {
        *at = AT_FDCWD;
        return path;
    }
    *at = cache->fd;
    return slash + 1;
}

static void directory_cache_close(directory_cache *cache) {
    if (cache->fd >= 0) close(cache->fd);
    cache->fd = -1;
    cache->length = 0;
}

/* Each item of ``paths`` (a tuple) is a bytes path without a NUL (a NUL would name another file in C); sets
 * TypeError and answers 0 otherwise. */
static int bytes_paths(PyObject *paths, const char *refusal) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(paths); i++) {
        PyObject *path = PyTuple_GET_ITEM(paths, i);
        if (!PyBytes_Check(path) || strlen(PyBytes_AS_STRING(path)) != (size_t)PyBytes_GET_SIZE(path)) {
            PyErr_SetString(PyExc_TypeError, refusal);
            return 0;
        }
    }
    return 1;
}

PyDoc_STRVAR(stat_files_doc,
             "stat_files(paths, readable) -> bytes\n\n"
             "Per path (a tuple of bytes paths) its size (int64, native order) when it is a regular file, looked "
             "at without following a link (and, when ``readable``, one this process may read by ``access``), "
             "else -1; with the GIL released.");

static PyObject *stat_files(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *paths;
    int readable;
    if (!PyArg_ParseTuple(args, "O!p", &PyTuple_Type, &paths, &readable)) return NULL;
    if (!bytes_paths(paths, "stat_files takes a tuple of bytes paths without NUL")) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(paths);
    PyObject *sizes = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    if (sizes == NULL) return NULL;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(sizes);
    directory_cache *cache = PyMem_RawMalloc(sizeof(directory_cache));
    if (cache == NULL) {
        Py_DECREF(sizes);
        return PyErr_NoMemory();
    }
    cache->fd = -1;
    cache->length = 0;
    /* The tuple holds every path (immutable bytes) while the GIL is released. */
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t i = 0; i < count; i++) {
        int at;
        const char *name = name_in(cache, PyBytes_AS_STRING(PyTuple_GET_ITEM(paths, i)), &at);
        struct stat info;
        int plain = fstatat(at, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(info.st_mode);
        out[i] = plain && (!readable || faccessat(at, name, R_OK, 0) == 0) ? (int64_t)info.st_size : -1;
    }
    directory_cache_close(cache);
    Py_END_ALLOW_THREADS;
    PyMem_RawFree(cache);
    return sizes;
}

PyDoc_STRVAR(read_files_into_doc,
             "read_files_into(paths, buffer, byte_limit, record_limit, times=None) -> bytes\n\n"
             "Plain journal files (a tuple of bytes paths) read one after another into ``buffer`` with the GIL "
             "released; per path its length (int64, native order), or -1 for one to read the usual way: not a "
             "regular file (looked at before opening, and never through a link), not openable or readable, past "
             "``byte_limit``, holding more lines than ``record_limit`` (counted by newlines: conservative), grown "
             "or shrunk while read, or not fitting in what is left of the buffer. ``times``, when given, is a "
             "writable buffer of an int64 per path that gets each file read's modification time (nanoseconds "
             "since 1970, from the descriptor it read). The buffer's pages are made present first, in one call "
             "where the kernel can.");

/* One journal, ``name`` in the directory ``at``, into ``into`` (at most ``room`` bytes): its length, or -1 (see
 * read_files_into). */
static Py_ssize_t read_one_file(int at, const char *name, char *into, Py_ssize_t room, Py_ssize_t byte_limit,
                                Py_ssize_t record_limit, int64_t *modified) {
    struct stat info;
    /* Looked at first: opening a device can act on it. */
    if (fstatat(at, name, &info, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(info.st_mode)) return -1;
    int fd = openat(at, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    Py_ssize_t size = -1;
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size <= byte_limit && info.st_size <= room) {
        Py_ssize_t want = (Py_ssize_t)info.st_size, got = 0;
        /* A byte more than the size where the buffer has room: a regular file's short read is its end, so one
         * read says both that the file is whole and that it did not grow. */
        Py_ssize_t ask = want < room ? want + 1 : want;
        int ended = 0;
        while (got < ask) {
            ssize_t n = read(fd, into + got, (size_t)(ask - got));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                ended = n == 0;
                break;
            }
            got += n;
            if (n < ask - (got - n)) {
                ended = 1;
                break;
            }
        }
        if (got == want && !ended) {
            char extra;
            ssize_t more;
            do {
                more = read(fd, &extra, 1);
            } while (more < 0 && errno == EINTR);
            ended = more == 0;
        }
        if (got == want && ended) size = want;
        *modified = (int64_t)info.st_mtim.tv_sec * 1000000000 + (int64_t)info.st_mtim.tv_nsec;
    }
    close(fd);
    if (size > 0 && size / 2 + 1 > record_limit) {
        /* A non-blank line takes two bytes at least: only a journal this long can pass the bound. */
        Py_ssize_t newlines = 0;
        for (const char *p = into, *end = into + size; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
            newlines++;
        if (newlines + 1 > record_limit) return -1;
    }
    return size;
}

static PyObject *read_files_into(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *paths;
    Py_buffer buffer, times = {0};
    Py_ssize_t byte_limit, record_limit;
    if (!PyArg_ParseTuple(args, "O!w*nn|w*", &PyTuple_Type, &paths, &buffer, &byte_limit, &record_limit, &times))
        return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(paths);
    int paths_ok = bytes_paths(paths, "read_files_into takes a tuple of bytes paths without NUL");
    if (paths_ok && times.buf != NULL && times.len != count * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_TypeError, "read_files_into: times holds an int64 per path");
        paths_ok = 0;
    }
    PyObject *lengths = paths_ok ? PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t)) : NULL;
    directory_cache *cache = lengths != NULL ? PyMem_RawMalloc(sizeof(directory_cache)) : NULL;
    if (cache == NULL) {
        if (lengths != NULL) {
            Py_DECREF(lengths);
            PyErr_NoMemory();
        }
        PyBuffer_Release(&buffer);
        if (times.buf != NULL) PyBuffer_Release(&times);
        return NULL;
    }
    cache->fd = -1;
    cache->length = 0;
    int64_t unused_time, *modified = times.buf;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(lengths);
    char *into = buffer.buf;
    Py_ssize_t position = 0;
    /* The tuple holds every path (immutable bytes) while the GIL is released. */
    Py_BEGIN_ALLOW_THREADS;
    make_present(into, buffer.len);
    for (Py_ssize_t i = 0; i < count; i++) {
        int at;
        const char *name = name_in(cache, PyBytes_AS_STRING(PyTuple_GET_ITEM(paths, i)), &at);
        Py_ssize_t size = read_one_file(at, name, into + position, buffer.len - position, byte_limit, record_limit,
                                        modified != NULL ? modified + i : &unused_time);
        out[i] = size;
        if (size > 0) position += size;
    }
    directory_cache_close(cache);
    Py_END_ALLOW_THREADS;
    PyMem_RawFree(cache);
    PyBuffer_Release(&buffer);
    if (times.buf != NULL) PyBuffer_Release(&times);
    return lengths;
}
