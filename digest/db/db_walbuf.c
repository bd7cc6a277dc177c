/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SQLite's write-ahead log written in one call a commit (db_internal.h).
 *
 * SQLite writes each frame of a commit to the log in two calls, its
 * 24-byte header and its page: a job of jobcomp's follow changes some 18
 * pages (the job's row, its indexes, metrics, nodes, line, day and the
 * log's offset), 36 pwrite calls a job.  On the 2-core bench machine 36
 * calls of those sizes took 51 to 77 us, one call of the same bytes 8 to
 * 10 us.  This VFS, the default one underneath, keeps the frames of a
 * write-ahead log back and writes them in one call when the commit's
 * frame (a header whose database size is not 0) has its page.  What it
 * keeps back no one else can see yet: a reader reads only the frames of
 * a commit that the log's index names, and SQLite names them after the
 * last frame's write returned (its error fails the commit, as a write of
 * its own would).  Anything else on the file (a read, a sync, its size, a
 * write elsewhere) writes what was kept first.  A write it does not know
 * the shape of goes through as it came.
 */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "db_internal.h"

#define WALBUF_VFS "lwm2-walbuf"
/* a frame's header, as SQLite's wal.c writes it */
#define FRAME_HEADER 24
/* what a large transaction's frames (an import's) may hold back */
#define WALBUF_MAX (4 << 20)
/* the most one write hands the VFS underneath (31 pages of 4 KiB) */
#define WALBUF_WRITE_MAX (124 * 1024)

struct walbuf_file {
	sqlite3_file base;
	sqlite3_file *real; /* the file of the VFS underneath, after this struct */
	bool wal;
	/* the frames held back: len bytes at off of the file; a header
	 * last, waiting for its page (commit: it ends a transaction) */
	char *buf;
	size_t len, cap;
	sqlite3_int64 off;
	bool header_last, commit;
};

static sqlite3_vfs *real_vfs;

#define REAL(f)    (((struct walbuf_file *)(f))->real)
#define REAL_IO(f) (REAL(f)->pMethods)

/* The frames held back written: SQLite's code for the write.  In pieces
 * of at most WALBUF_WRITE_MAX: the unix VFS writes no more than 128 KiB
 * - 1 bytes in one call (it cuts the count to its low 17 bits). */
static int flush(struct walbuf_file *f)
{
	int rc = SQLITE_OK;

	for (size_t done = 0; done < f->len && rc == SQLITE_OK;) {
		size_t n = f->len - done < WALBUF_WRITE_MAX ? f->len - done : WALBUF_WRITE_MAX;

		rc = REAL_IO(f)->xWrite(f->real, f->buf + done, (int)n,
		                        f->off + (sqlite3_int64)done);
		done += n;
	}
	f->len = 0;
	f->header_last = false;
	return rc;
}

static bool hold(struct walbuf_file *f, const void *data, int amt, sqlite3_int64 off)
{
	size_t n = (size_t)amt;

	if (f->len + n > f->cap) {
		size_t cap = f->cap ? f->cap : 64 * 1024;
		char *b;

		while (cap < f->len + n)
			cap *= 2;
		if (!(b = realloc(f->buf, cap)))
			return false;
		f->buf = b;
		f->cap = cap;
	}
	if (!f->len)
		f->off = off;
	memcpy(f->buf + f->len, data, n);
	f->len += n;
	return true;
}

/* A page's size: a power of two from 512 (SQLite's page sizes); the
 * frame's page written whole. */
static bool is_page(int amt)
{
	return amt >= 512 && (amt & (amt - 1)) == 0;
}

static int wb_write(sqlite3_file *file, const void *data, int amt, sqlite3_int64 off)
{
	struct walbuf_file *f = (struct walbuf_file *)file;
	bool next = !f->len || off == f->off + (sqlite3_int64)f->len;
	int rc;

	if (f->wal && next && amt == FRAME_HEADER && !f->header_last) {
		const unsigned char *h = data;

		if (hold(f, data, amt, off)) {
			f->header_last = true;
			f->commit = (h[4] | h[5] | h[6] | h[7]) != 0;
			return SQLITE_OK;
		}
	} else if (f->wal && next && f->header_last && is_page(amt) && hold(f, data, amt, off)) {
		f->header_last = false;
		return f->commit || f->len >= WALBUF_MAX ? flush(f) : SQLITE_OK;
	}
	if ((rc = flush(f)) != SQLITE_OK)
		return rc;
	return REAL_IO(f)->xWrite(f->real, data, amt, off);
}

static int wb_close(sqlite3_file *file)
{
	struct walbuf_file *f = (struct walbuf_file *)file;
	int rc = flush(f), rc2 = REAL_IO(f)->xClose(f->real);

	free(f->buf);
	f->buf = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

/* The other methods: what was held back written first where they look
 * at the file's bytes, then the VFS underneath. */
#define FLUSHED(f)                                                                                 \
	do {                                                                                       \
		int rc_ = flush((struct walbuf_file *)(f));                                        \
		if (rc_ != SQLITE_OK)                                                              \
			return rc_;                                                                \
	} while (0)

static int wb_read(sqlite3_file *f, void *data, int amt, sqlite3_int64 off)
{
	FLUSHED(f);
	return REAL_IO(f)->xRead(REAL(f), data, amt, off);
}

static int wb_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	FLUSHED(f);
	return REAL_IO(f)->xTruncate(REAL(f), size);
}

static int wb_sync(sqlite3_file *f, int flags)
{
	FLUSHED(f);
	return REAL_IO(f)->xSync(REAL(f), flags);
}

static int wb_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	FLUSHED(f);
	return REAL_IO(f)->xFileSize(REAL(f), size);
}

static int wb_lock(sqlite3_file *f, int level)
{
	return REAL_IO(f)->xLock(REAL(f), level);
}

static int wb_unlock(sqlite3_file *f, int level)
{
	FLUSHED(f);
	return REAL_IO(f)->xUnlock(REAL(f), level);
}

static int wb_check_reserved_lock(sqlite3_file *f, int *out)
{
	return REAL_IO(f)->xCheckReservedLock(REAL(f), out);
}

static int wb_file_control(sqlite3_file *f, int op, void *arg)
{
	FLUSHED(f);
	return REAL_IO(f)->xFileControl(REAL(f), op, arg);
}

static int wb_sector_size(sqlite3_file *f)
{
	return REAL_IO(f)->xSectorSize(REAL(f));
}

static int wb_device_characteristics(sqlite3_file *f)
{
	return REAL_IO(f)->xDeviceCharacteristics(REAL(f));
}

static int wb_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **out)
{
	if (REAL_IO(f)->iVersion < 2)
		return SQLITE_IOERR;
	return REAL_IO(f)->xShmMap(REAL(f), region, size, extend, out);
}

static int wb_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	if (REAL_IO(f)->iVersion < 2)
		return SQLITE_IOERR;
	return REAL_IO(f)->xShmLock(REAL(f), offset, n, flags);
}

static void wb_shm_barrier(sqlite3_file *f)
{
	if (REAL_IO(f)->iVersion >= 2)
		REAL_IO(f)->xShmBarrier(REAL(f));
}

static int wb_shm_unmap(sqlite3_file *f, int delete_flag)
{
	if (REAL_IO(f)->iVersion < 2)
		return SQLITE_OK;
	return REAL_IO(f)->xShmUnmap(REAL(f), delete_flag);
}

static int wb_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **out)
{
	*out = NULL;
	FLUSHED(f);
	if (REAL_IO(f)->iVersion < 3)
		return SQLITE_OK; /* no mapping: SQLite reads instead */
	return REAL_IO(f)->xFetch(REAL(f), off, amt, out);
}

static int wb_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	if (REAL_IO(f)->iVersion < 3)
		return SQLITE_OK;
	return REAL_IO(f)->xUnfetch(REAL(f), off, p);
}

static const sqlite3_io_methods walbuf_io = {
    .iVersion = 3,
    .xClose = wb_close,
    .xRead = wb_read,
    .xWrite = wb_write,
    .xTruncate = wb_truncate,
    .xSync = wb_sync,
    .xFileSize = wb_file_size,
    .xLock = wb_lock,
    .xUnlock = wb_unlock,
    .xCheckReservedLock = wb_check_reserved_lock,
    .xFileControl = wb_file_control,
    .xSectorSize = wb_sector_size,
    .xDeviceCharacteristics = wb_device_characteristics,
    .xShmMap = wb_shm_map,
    .xShmLock = wb_shm_lock,
    .xShmBarrier = wb_shm_barrier,
    .xShmUnmap = wb_shm_unmap,
    .xFetch = wb_fetch,
    .xUnfetch = wb_unfetch,
};

static int wb_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags,
                   int *out_flags)
{
	struct walbuf_file *f = (struct walbuf_file *)file;
	int rc;

	(void)vfs;
	memset(f, 0, sizeof(*f));
	f->real = (sqlite3_file *)(void *)(f + 1);
	f->wal = (flags & SQLITE_OPEN_WAL) != 0;
	rc = real_vfs->xOpen(real_vfs, name, f->real, flags, out_flags);
	/* SQLite closes a file that failed to open only where it has methods */
	f->base.pMethods = f->real->pMethods ? &walbuf_io : NULL;
	return rc;
}

/* The VFS's other calls: the one underneath's, given itself. */
static int wb_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	(void)vfs;
	return real_vfs->xDelete(real_vfs, name, sync_dir);
}

static int wb_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	(void)vfs;
	return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int wb_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return real_vfs->xFullPathname(real_vfs, name, n, out);
}

static int wb_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return real_vfs->xRandomness(real_vfs, n, out);
}

static int wb_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return real_vfs->xSleep(real_vfs, us);
}

static int wb_current_time(sqlite3_vfs *vfs, double *out)
{
	(void)vfs;
	return real_vfs->xCurrentTime(real_vfs, out);
}

static int wb_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, n, out) : 0;
}

static int wb_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	double d;
	int rc;

	(void)vfs;
	if (real_vfs->iVersion >= 2 && real_vfs->xCurrentTimeInt64)
		return real_vfs->xCurrentTimeInt64(real_vfs, out);
	rc = real_vfs->xCurrentTime(real_vfs, &d);
	*out = (sqlite3_int64)(d * 86400000.0);
	return rc;
}

static void *wb_dl_open(sqlite3_vfs *vfs, const char *name)
{
	(void)vfs;
	return real_vfs->xDlOpen(real_vfs, name);
}

static void wb_dl_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	real_vfs->xDlError(real_vfs, n, out);
}

static void (*wb_dl_sym(sqlite3_vfs *vfs, void *lib, const char *name))(void)
{
	(void)vfs;
	return real_vfs->xDlSym(real_vfs, lib, name);
}

static void wb_dl_close(sqlite3_vfs *vfs, void *lib)
{
	(void)vfs;
	real_vfs->xDlClose(real_vfs, lib);
}

static sqlite3_vfs walbuf_vfs;
static const char *walbuf_name;

static void walbuf_register(void)
{
	if (sqlite3_initialize() != SQLITE_OK || !(real_vfs = sqlite3_vfs_find(NULL)))
		return;
	walbuf_vfs = (sqlite3_vfs){
	    .iVersion = 2,
	    .szOsFile = (int)sizeof(struct walbuf_file) + real_vfs->szOsFile,
	    .mxPathname = real_vfs->mxPathname,
	    .zName = WALBUF_VFS,
	    .xOpen = wb_open,
	    .xDelete = wb_delete,
	    .xAccess = wb_access,
	    .xFullPathname = wb_full_pathname,
	    .xDlOpen = real_vfs->xDlOpen ? wb_dl_open : NULL,
	    .xDlError = real_vfs->xDlError ? wb_dl_error : NULL,
	    .xDlSym = real_vfs->xDlSym ? wb_dl_sym : NULL,
	    .xDlClose = real_vfs->xDlClose ? wb_dl_close : NULL,
	    .xRandomness = wb_randomness,
	    .xSleep = wb_sleep,
	    .xCurrentTime = wb_current_time,
	    .xGetLastError = wb_last_error,
	    .xCurrentTimeInt64 = wb_current_time_int64,
	};
	if (sqlite3_vfs_register(&walbuf_vfs, 0) == SQLITE_OK)
		walbuf_name = WALBUF_VFS;
}

const char *lwm2_db_walbuf_vfs(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, walbuf_register);
	return walbuf_name;
}
