#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes posix_wrappers.h, posix_wrappers.c and the POSIX part of
liblwm2.map from the table below: every function the POSIX module
interposes is named once, here.  The output is committed, so building lwm2
needs no Python; run `python3 posix_gen.py` in preload/ after changing the
table (or `python3 posix_gen.py OUTDIR` to write the three files
elsewhere, as the check that they are current does).

posix_wrappers.h  the real functions, as X-macro lists POSIX_EAGER_REALS
                  (resolved at the module's init: async-signal-safe
                  descriptor calls) and POSIX_LAZY_REALS (on first use),
                  and prototypes the system headers do not give
posix_wrappers.c  the wrappers themselves; included by posix.c after its
                  helpers (they are static to that file)
liblwm2.map       the names between the "posix" marker comments

Kinds:
  fast    a read or write on a descriptor (`fd`) or a stream (`fp`): the
          exported function routes the call from two or three loads
          (posix_fd_route), a counted call goes to NAME_count, anything
          unusual to NAME_body, which decides everything again
  plain   one exported function: real resolved, `enter` gives the thread
          to count into (or NULL: pass through), `end` counts the call
  custom  written by hand in posix.c; the table gives its real function
          and its exported name only

Fields: `fallback` is returned when libc has no such function (or it
cannot be looked up yet: inside dlsym); `bytes` is what a read or write
moved, from `r`; `locals` and `pre` are extra declarations and statements
(`pre` then sets t itself); `passwrap` wraps a passed-through call's
result; `mode`: the variadic mode argument of the open family.
"""
import os
import re
import shutil
import subprocess
import sys

T = []


def split_params(params):
    """'int fd, void *buf' -> [('int', 'fd'), ('void *', 'buf')]."""
    out = []
    if params in ('void', ''):
        return out
    for p in params.split(', '):
        if p == '...':
            out.append(('...', None))
            continue
        m = re.match(r'^(.*?)(\w+)(\[\w*\])?$', p)
        out.append((m.group(1).strip() + (m.group(3) or ''), m.group(2)))
    return out


def types_of(params):
    ps = split_params(params)
    return '(' + (', '.join(t for t, _ in ps) if ps else 'void') + ')'


def e(name, ret, params, kind, resolve='lazy', **kw):
    d = dict(name=name, ret=ret, params=params, kind=kind, resolve=resolve, proto=False,
             fallback=None, enter=None, end=None, bytes='posix_bytes(r)', locals=[], pre=None,
             passwrap=None, mode=False, real=None, comment=None)
    d.update(kw)
    T.append(d)


EAGER = 'eager'
R, W = 'read', 'write'


def fd_fast(name, ret, params, role, fallback, **kw):
    e(name, ret, params, 'fast', EAGER, role=role, route='fd', fallback=fallback, **kw)


def fp_fast(name, params, role, fallback, **kw):
    e(name, 'size_t', params, 'fast', role=role, route='fp', fallback=fallback,
      bytes='(uint64_t)r * size', **kw)


def plain(name, ret, params, enter=None, end=None, fallback=None, resolve='lazy', **kw):
    e(name, ret, params, 'plain', resolve, enter=enter, end=end, fallback=fallback, **kw)


def custom(name, ret, real, resolve='lazy', **kw):
    e(name, ret, None, 'custom', resolve, real=real, **kw)


# ---- reads and writes on descriptors ----------------------------------------
RD = 'int fd, void *buf, size_t n'
WR = 'int fd, const void *buf, size_t n'
IOV = 'int fd, const struct iovec *iov, int cnt'
LOHI = 'posix_lo(off), posix_hi(off)'
fd_fast('read', 'ssize_t', RD, R, 'syscall(SYS_read, fd, buf, n)')
fd_fast('__read_chk', 'ssize_t', RD + ', size_t buflen', R, 'read(fd, buf, n)', proto=True)
fd_fast('write', 'ssize_t', WR, W, 'syscall(SYS_write, fd, buf, n)')
fd_fast('pread', 'ssize_t', RD + ', off_t off', R, 'syscall(SYS_pread64, fd, buf, n, off)')
fd_fast('pread64', 'ssize_t', RD + ', off64_t off', R, 'syscall(SYS_pread64, fd, buf, n, off)')
fd_fast('__pread_chk', 'ssize_t', RD + ', off_t off, size_t buflen', R, 'pread(fd, buf, n, off)',
        proto=True)
fd_fast('__pread64_chk', 'ssize_t', RD + ', off64_t off, size_t buflen', R,
        'pread64(fd, buf, n, off)', proto=True)
fd_fast('pwrite', 'ssize_t', WR + ', off_t off', W, 'syscall(SYS_pwrite64, fd, buf, n, off)')
fd_fast('pwrite64', 'ssize_t', WR + ', off64_t off', W, 'syscall(SYS_pwrite64, fd, buf, n, off)')
fd_fast('readv', 'ssize_t', IOV, R, 'syscall(SYS_readv, fd, iov, cnt)')
fd_fast('writev', 'ssize_t', IOV, W, 'syscall(SYS_writev, fd, iov, cnt)')
for sfx, off in (('', 'off_t'), ('64', 'off64_t')):
    fd_fast('preadv' + sfx, 'ssize_t', IOV + ', %s off' % off, R,
            'syscall(SYS_preadv, fd, iov, cnt, %s)' % LOHI)
    fd_fast('pwritev' + sfx, 'ssize_t', IOV + ', %s off' % off, W,
            'syscall(SYS_pwritev, fd, iov, cnt, %s)' % LOHI)
    fd_fast('preadv%sv2' % sfx if sfx else 'preadv2', 'ssize_t', IOV + ', %s off, int flags' % off,
            R, 'syscall(SYS_preadv2, fd, iov, cnt, %s, flags)' % LOHI)
    fd_fast('pwritev%sv2' % sfx if sfx else 'pwritev2', 'ssize_t',
            IOV + ', %s off, int flags' % off, W,
            'syscall(SYS_pwritev2, fd, iov, cnt, %s, flags)' % LOHI)

# ---- copies between descriptors ----------------------------------------------
COPY = dict(locals=['bool fin, fout;'], end=['posix_end_copy(s, fin, fout, r);'], resolve=EAGER)
plain('copy_file_range', 'ssize_t',
      'int in, loff_t *off_in, int out, loff_t *off_out, size_t len, unsigned flags',
      'posix_enter_copy(in, out, &fin, &fout)',
      fallback='syscall(SYS_copy_file_range, in, off_in, out, off_out, len, flags)', **COPY)
plain('sendfile', 'ssize_t', 'int out, int in, off_t *off, size_t n',
      'posix_enter_copy(in, out, &fin, &fout)', fallback='syscall(SYS_sendfile, out, in, off, n)',
      **COPY)
plain('sendfile64', 'ssize_t', 'int out, int in, off64_t *off, size_t n',
      'posix_enter_copy(in, out, &fin, &fout)', fallback='syscall(SYS_sendfile, out, in, off, n)',
      **COPY)

# ---- metadata on descriptors --------------------------------------------------
OPEN = dict(enter='posix_enter_open()', end=['posix_end_open(s, r);'],
            passwrap='posix_opened_untimed(%s)', resolve=EAGER)
CREAT = 'O_CREAT | O_WRONLY | O_TRUNC'
for sfx, large in (('', ''), ('64', ' | O_LARGEFILE')):
    plain('open' + sfx, 'int', 'const char *path, int flags, ...', fallback=(
        'posix_opened_untimed((int)syscall(SYS_openat, AT_FDCWD, path, flags%s, mode))' % large),
        mode=True, **OPEN)
    plain('openat' + sfx, 'int', 'int dirfd, const char *path, int flags, ...', fallback=(
        'posix_opened_untimed((int)syscall(SYS_openat, dirfd, path, flags%s, mode))' % large),
        mode=True, **OPEN)
    plain('creat' + sfx, 'int', 'const char *path, mode_t mode', fallback=(
        'posix_opened_untimed((int)syscall(SYS_openat, AT_FDCWD, path, %s%s, mode))' %
        (CREAT, large)), **OPEN)
    plain('__open%s_2' % sfx, 'int', 'const char *path, int flags',
          fallback='open%s(path, flags)' % sfx, proto=True, **OPEN)
    plain('__openat%s_2' % sfx, 'int', 'int dirfd, const char *path, int flags',
          fallback='openat%s(dirfd, path, flags)' % sfx, proto=True, **OPEN)
custom('close', 'int', '(int)', EAGER)
FDMETA = dict(enter='posix_enter_fd(fd)', resolve=EAGER)
plain('lseek', 'off_t', 'int fd, off_t off, int whence', end=['posix_end_meta(s);'],
      fallback='syscall(SYS_lseek, fd, off, whence)', **FDMETA)
plain('lseek64', 'off64_t', 'int fd, off64_t off, int whence', end=['posix_end_meta(s);'],
      fallback='syscall(SYS_lseek, fd, off, whence)', **FDMETA)
for name in ('fsync', 'fdatasync'):
    plain(name, 'int', 'int fd', end=['posix_end_sync(s);'],
          fallback='(int)syscall(SYS_%s, fd)' % name, **FDMETA)

# ---- descriptor bookkeeping (never counted; written in posix.c) -------------
custom('dup', 'int', '(int)', EAGER)
custom('dup2', 'int', '(int, int)', EAGER)
custom('dup3', 'int', '(int, int, int)', EAGER)
custom('fcntl', 'int', '(int, int, ...)', EAGER)
custom('fcntl64', 'int', '(int, int, ...)', EAGER, proto='int fcntl64(int fd, int cmd, ...);')
custom('pipe', 'int', '(int *)', EAGER)
custom('pipe2', 'int', '(int *, int)', EAGER)
custom('socket', 'int', '(int, int, int)', EAGER)
custom('socketpair', 'int', '(int, int, int, int *)', EAGER)
custom('accept', 'int', '(int, struct sockaddr *, socklen_t *)', EAGER)
custom('accept4', 'int', '(int, struct sockaddr *, socklen_t *, int)', EAGER)
custom('close_range', 'int', '(unsigned, unsigned, int)', EAGER)
custom('closefrom', 'void', '(int)', EAGER)

# ---- stdio reads --------------------------------------------------------------
FREAD = 'void *ptr, size_t size, size_t n, FILE *fp'
FREAD_CHK = 'void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp'
fp_fast('fread', FREAD, R, 'posix_no_real(), 0')
fp_fast('fread_unlocked', FREAD, R, 'posix_no_real(), 0')
fp_fast('__fread_chk', FREAD_CHK, R, 'fread(ptr, size, n, fp)', proto=True)
fp_fast('__fread_unlocked_chk', FREAD_CHK, R, 'fread_unlocked(ptr, size, n, fp)', proto=True)

STREAM = 'posix_enter_stream(fp)'
NOREAL_EOF = 'posix_no_real(), EOF'
LINE = dict(end=['posix_end_read(s, posix_line_bytes(r));'])
plain('fgets', 'char *', 'char *buf, int n, FILE *fp', STREAM, fallback='posix_no_real(), NULL',
      **LINE)
plain('fgets_unlocked', 'char *', 'char *buf, int n, FILE *fp', STREAM,
      fallback='posix_no_real(), NULL', **LINE)
plain('__fgets_chk', 'char *', 'char *buf, size_t size, int n, FILE *fp', STREAM,
      fallback='fgets(buf, n, fp)', proto=True, **LINE)
plain('__fgets_unlocked_chk', 'char *', 'char *buf, size_t size, int n, FILE *fp', STREAM,
      fallback='fgets_unlocked(buf, n, fp)', proto=True, **LINE)
CHAR_IN = ['posix_end_read(s, posix_char_bytes(r));']
for name in ('fgetc', 'getc', 'fgetc_unlocked', 'getc_unlocked'):
    plain(name, 'int', 'FILE *fp', STREAM, CHAR_IN, NOREAL_EOF)
plain('getchar', 'int', 'void', 'posix_enter_stream(stdin)', CHAR_IN, NOREAL_EOF)
plain('getline', 'ssize_t', 'char **line, size_t *cap, FILE *fp', STREAM,
      ['posix_end_read(s, posix_bytes(r));'], 'posix_no_real(), -1')
plain('getdelim', 'ssize_t', 'char **line, size_t *cap, int delim, FILE *fp', STREAM,
      ['posix_end_read(s, posix_bytes(r));'], 'posix_no_real(), -1')
plain('__getdelim', 'ssize_t', 'char **line, size_t *cap, int delim, FILE *fp', STREAM,
      ['posix_end_read(s, posix_bytes(r));'], 'posix_no_real(), -1',
      comment='What an optimised build\'s inline getline calls.')

# ---- stdio writes -------------------------------------------------------------
FWRITE = 'const void *ptr, size_t size, size_t n, FILE *fp'
fp_fast('fwrite', FWRITE, W, 'posix_no_real(), 0')
fp_fast('fwrite_unlocked', FWRITE, W, 'posix_no_real(), 0')
for name in ('fputs', 'fputs_unlocked'):
    plain(name, 'int', 'const char *str, FILE *fp', STREAM,
          ['posix_end_write(s, posix_puts_bytes(r, str, 0));'], NOREAL_EOF)
plain('puts', 'int', 'const char *str', 'posix_enter_stream(stdout)',
      ['posix_end_write(s, posix_puts_bytes(r, str, 1));'], NOREAL_EOF)
for name in ('fputc', 'putc', 'fputc_unlocked', 'putc_unlocked'):
    plain(name, 'int', 'int c, FILE *fp', STREAM, ['posix_end_write(s, posix_char_bytes(r));'],
          NOREAL_EOF)
plain('putchar', 'int', 'int c', 'posix_enter_stream(stdout)',
      ['posix_end_write(s, posix_char_bytes(r));'], NOREAL_EOF)
# The printf family lands in posix_vfprintf (posix.c).
custom('vfprintf', 'int', '(FILE *, const char *, va_list)')
custom('__vfprintf_chk', 'int', '(FILE *, int, const char *, va_list)',
       proto='int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap);')
custom('fprintf', 'int', None)
custom('vprintf', 'int', None)
custom('printf', 'int', None)
custom('__fprintf_chk', 'int', None, proto='int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...);')
custom('__vprintf_chk', 'int', None,
       proto='int __vprintf_chk(int flag, const char *fmt, va_list ap);')
custom('__printf_chk', 'int', None, proto='int __printf_chk(int flag, const char *fmt, ...);')

# ---- stdio metadata -----------------------------------------------------------
FOPEN = dict(enter='posix_enter_open()', end=['posix_end_open(s, posix_fp_fd(r));'],
             passwrap='posix_made_stream(%s)', fallback='posix_no_real(), NULL')
plain('fopen', 'FILE *', 'const char *path, const char *mode', **FOPEN)
plain('fopen64', 'FILE *', 'const char *path, const char *mode', **FOPEN)
plain('fdopen', 'FILE *', 'int fd, const char *mode', 'posix_enter_fd(fd)',
      ['posix_end_meta(s);'], 'posix_no_real(), NULL')
custom('freopen', 'FILE *', '(const char *, const char *, FILE *)')
custom('freopen64', 'FILE *', '(const char *, const char *, FILE *)')
custom('fclose', 'int', '(FILE *)')
custom('pclose', 'int', '(FILE *)')
plain('fflush', 'int', 'FILE *fp', STREAM, ['posix_end_meta(s);'], NOREAL_EOF,
      comment='fflush(NULL) flushes every stream, files or not: passed through.')
for name, off in (('fseek', 'long'), ('fseeko', 'off_t'), ('fseeko64', 'off64_t')):
    plain(name, 'int', 'FILE *fp, %s off, int whence' % off, STREAM, ['posix_end_meta(s);'],
          'posix_no_real(), -1')

# ---- asynchronous I/O ---------------------------------------------------------
AIO_COUNT = 'posix_count_aio(t, posix_finish(s), 0, 0);'
for b in ('', '64'):
    cb = 'struct aiocb%s' % b
    for op, write in (('read', 'false'), ('write', 'true')):
        plain('aio_%s%s' % (op, b), 'int', '%s *cb' % cb, 'posix_enter_fd(cb->aio_fildes)',
              ['if (r == 0)', '\taio_remember(cb, %s);' % write, AIO_COUNT],
              'posix_no_real(), -1',
              comment='A submission of one request on a file: timed, remembered when taken.')
    plain('lio_listio' + b, 'int', 'int mode, %s *const list[], int n, struct sigevent *sev' % cb,
          None, [AIO_COUNT], 'posix_no_real(), -1',
          pre=['for (int i = 0; i < n; i++) {', '\t%s *cb = list[i];' % cb,
               '\tif (!cb || cb->aio_lio_opcode == LIO_NOP)', '\t\tcontinue;',
               '\tif (posix_enter_fd(cb->aio_fildes)) {', '\t\tt = posix_thread();',
               '\t\taio_remember(cb, cb->aio_lio_opcode == LIO_WRITE);', '\t}', '}'],
          comment='The list\'s requests on files are remembered before the call: with '
          'LIO_WAIT they may be complete (and collected by another thread) by the time it '
          'returns.')
    plain('aio_error' + b, 'int', 'const %s *cb' % cb, 'posix_enter_fd(cb->aio_fildes)',
          [AIO_COUNT], 'ENOSYS', comment='Polling a request: a call and its time.')
    plain('aio_return' + b, 'ssize_t', '%s *cb' % cb, 'posix_enter_fd(cb->aio_fildes)',
          ['dir = aio_forget(cb);',
           'posix_count_aio(t, posix_finish(s), dir == 1 ? posix_bytes(r) : 0, '
           'dir == 2 ? posix_bytes(r) : 0);'],
          'posix_no_real(), -1', locals=['int dir;'],
          comment='Collecting the result: the request\'s bytes count here, once.')
    plain('aio_suspend' + b, 'int',
          'const %s *const list[], int n, const struct timespec *timeout' % cb, None,
          [AIO_COUNT], 'posix_no_real(), -1',
          pre=['for (int i = 0; i < n && !t; i++)',
               '\tt = list[i] ? posix_enter_fd(list[i]->aio_fildes) : NULL;'],
          comment='Waiting: a call and its time when any of the requests is on a file.')
    plain('aio_cancel' + b, 'int', 'int fd, %s *cb' % cb, 'posix_enter_fd(fd)', [AIO_COUNT],
          'posix_no_real(), -1')
custom('io_submit', 'int', '(void *, long, void **)',
       proto='int io_submit(void *ctx, long nr, void **iocbs);')
custom('io_getevents', 'int', '(void *, long, long, void *, struct timespec *)',
       proto='int io_getevents(void *ctx, long min_nr, long nr, void *events, '
       'struct timespec *timeout);')
custom('io_uring_queue_init', 'int', '(unsigned, void *, unsigned)',
       proto='int io_uring_queue_init(unsigned entries, void *ring, unsigned flags);')
custom('io_uring_queue_init_params', 'int', '(unsigned, void *, void *)',
       proto='int io_uring_queue_init_params(unsigned entries, void *ring, void *p);')
# syscall keeps its own real pointer: it is resolved without errno games.
custom('syscall', 'long', None)
custom('mmap', 'void *', '(void *, size_t, int, int, int, off_t)')
custom('mmap64', 'void *', '(void *, size_t, int, int, int, off64_t)')


def decl(x):
    return x['params'] if x['params'] else 'void'


def args(x):
    a = [n for _, n in split_params(x['params']) if n]
    if x['mode']:
        a.append('mode')
    return ', '.join(a)


def proto(x):
    return '%s%s%s(%s)' % (x['ret'], '' if x['ret'].endswith('*') else ' ', x['name'], decl(x))


# The functions most programs call most, first in the struct of real
# functions (posix.c), on the cache line of the clock flag.
HOT = ('read', 'write', 'pread', 'pwrite', 'fread', 'fwrite', 'readv')


def gen_real_lists():
    out = []
    for which, title in ((EAGER, 'POSIX_EAGER_REALS'), ('lazy', 'POSIX_LAZY_REALS')):
        rows = []
        for x in T:
            if x['resolve'] != which:
                continue
            real = x['real'] if x['kind'] == 'custom' else types_of(x['params'])
            if real is None:
                continue
            rows.append('\tX(%s, %s, %s)' % (x['name'], x['ret'], real))
        out.append('#define %s(X) \\\n%s' % (title, ' \\\n'.join(rows)))
        out.append('')
    rows = ['\tX(%s)' % n for n in HOT] + ['\tX(%s)' % x['name'] for x in T
                                           if x['name'] not in HOT and x['kind'] != 'custom'
                                           or x['kind'] == 'custom' and x['real']]
    out.append('/* Every real function by use, the most called first. */')
    out.append('#define POSIX_REALS_BY_USE(X) \\\n%s' % ' \\\n'.join(rows))
    out.append('')
    return out


def body_lines(x, fname, export):
    n, ret = x['name'], x['ret']
    L = []
    if x['comment'] and export:
        L.append('/* %s */' % x['comment'])
    if export:
        L.append('LWM2_EXPORT %s%s%s(%s)' % (ret, '' if ret.endswith('*') else ' ', fname,
                                             decl(x)))
    else:
        L.append('static __attribute__((noinline)) %s%s%s(%s)' % (
            ret, '' if ret.endswith('*') else ' ', fname, decl(x)))
    L.append('{')
    L.append('\t%s_fn real = get_%s();' % (n, n))
    L.append('\tstruct lwm2_thread *t%s;' % (' = NULL' if x['pre'] else ''))
    L.append('\tstruct posix_span s;')
    for loc in x['locals']:
        L.append('\t' + loc)
    if x['mode']:
        L.append('\tva_list ap;')
        L.append('\tint mode;')
    L.append('\t%s r;' % ret)
    L.append('')
    if x['mode']:
        L.append('\tva_start(ap, flags);')
        L.append('\tmode = posix_mode_arg(flags, ap);')
        L.append('\tva_end(ap);')
    L.append('\tif (LWM2_UNLIKELY(!real))')
    L.append('\t\treturn %s;' % x['fallback'])
    if x['pre']:
        L += ['\t' + p for p in x['pre']]
    else:
        L.append('\tt = %s;' % x['enter'])
    call = 'real(%s)' % args(x)
    L.append('\tif (!t)')
    L.append('\t\treturn %s;' % ((x['passwrap'] % call) if x['passwrap'] else call))
    L.append('\ts = posix_begin(t);')
    L.append('\tr = %s;' % call)
    L += ['\t' + s for s in x['end']]
    L.append('\treturn r;')
    L.append('}')
    return L


def gen_fast(x):
    n, ret, role = x['name'], x['ret'], x['role']
    a = args(x)
    end = 'posix_end_%s(s, %s);' % (role, x['bytes'])
    x = dict(x, enter=('posix_enter_fd(fd)' if x['route'] == 'fd' else 'posix_enter_stream(fp)'),
             end=[end])
    L = body_lines(x, n + '_body', False)
    L.append('')
    L.append('/* A call on a file, lwm2 on: timed and counted. */')
    L.append('static __attribute__((noinline)) %s %s_count(%s, %s_fn real)' % (ret, n, decl(x), n))
    L.append('{')
    L.append('\tstruct posix_fast f;')
    L.append('\t%s r;' % ret)
    L.append('')
    L.append('\tif (LWM2_UNLIKELY(!posix_fast_begin(&f)))')
    L.append('\t\treturn %s_body(%s);' % (n, a))
    L.append('\tr = real(%s);' % a)
    L.append('\tposix_fast_end_%s(f, %s);' % (role, x['bytes']))
    L.append('\treturn r;')
    L.append('}')
    if x['route'] == 'fp':
        L.append('')
        L.append('/* A call the stream\'s buffer serves alone: counted, not timed; a')
        L.append(' * frame of its own without the timed path\'s stack guard. */')
        L.append('static __attribute__((noinline)) %s %s_buffered(%s, %s_fn real,'
                 % (ret, n, decl(x), n))
        L.append('struct lwm2_thread *t)')
        L.append('{')
        L.append('\t%s r = real(%s);' % (ret, a))
        L.append('')
        L.append('\tposix_count_buffered_%s(t, %s);' % (role, x['bytes']))
        L.append('\treturn r;')
        L.append('}')
    L.append('')
    L.append('LWM2_EXPORT %s %s(%s)' % (ret, n, decl(x)))
    L.append('{')
    L.append('\t%s_fn real = atomic_load_explicit(&posix_real.%s, memory_order_relaxed);' % (n, n))
    L.append('')
    if x['route'] == 'fd':
        L.append('\tswitch (posix_fd_route(real, fd)) {')
    else:
        L.append('\tswitch (posix_stream_route(real, fp)) {')
    L.append('\tcase POSIX_PASS:')
    L.append('\t\treturn real(%s);' % a)
    L.append('\tcase POSIX_COUNT:')
    if x['route'] == 'fp':
        L.append('\t\tif (LWM2_LIKELY(lwm2_self != NULL) && posix_buffered_%s(fp, size, n))'
                 % role)
        L.append('\t\t\treturn %s_buffered(%s, real, lwm2_self);' % (n, a))
    L.append('\t\treturn %s_count(%s, real);' % (n, a))
    L.append('\tcase POSIX_SLOW:')
    L.append('\t\tbreak;')
    L.append('\t}')
    L.append('\treturn %s_body(%s);' % (n, a))
    L.append('}')
    return L


HEAD = ['/* SPDX-License-Identifier: GPL-2.0-or-later */',
        '/* Generated by posix_gen.py from its table: edit the table, not this file. */']


def emit():
    h = HEAD + ['#ifndef LWM2_POSIX_WRAPPERS_H', '#define LWM2_POSIX_WRAPPERS_H', '',
                '/*', ' * The real functions: X(name, return type, parameter types).  The eager',
                ' * ones are resolved at the module\'s init (async-signal-safe callers), the',
                ' * lazy ones on first use.', ' */']
    h += gen_real_lists()
    h.append('/* Entry points the system headers do not declare without _FORTIFY_SOURCE,')
    h.append(' * GNU extensions and libaio/liburing functions. */')
    for x in T:
        if isinstance(x['proto'], str):
            h.append(x['proto'])
        elif x['proto']:
            h.append(proto(x) + ';')
    h += ['', '#endif /* LWM2_POSIX_WRAPPERS_H */', '']
    c = HEAD + ['/* Included by posix.c, after the helpers it uses. */', '']
    for x in T:
        if x['kind'] == 'fast':
            c += gen_fast(x) + ['']
        elif x['kind'] == 'plain':
            c += body_lines(x, x['name'], True) + ['']
    return '\n'.join(h), '\n'.join(c)


MAP_BEGIN = '    /* posix: generated by posix_gen.py from its table */'
MAP_END = '    /* end posix */'


def map_section():
    names = [x['name'] for x in T]
    lines, cur = [], '   '
    for n in names:
        if len(cur) + len(n) + 2 > 100:
            lines.append(cur)
            cur = '   '
        cur += ' %s;' % n
    lines.append(cur)
    return [MAP_BEGIN] + lines + [MAP_END]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else here
    h, c = emit()
    with open(os.path.join(here, 'liblwm2.map')) as f:
        old = f.read().split('\n')
    if MAP_BEGIN not in old or MAP_END not in old:
        sys.exit('posix_gen.py: liblwm2.map lacks the posix marker comments')
    m = old[:old.index(MAP_BEGIN)] + map_section() + old[old.index(MAP_END) + 1:]
    for name, text in (('posix_wrappers.h', h), ('posix_wrappers.c', c),
                       ('liblwm2.map', '\n'.join(m))):
        with open(os.path.join(out, name), 'w') as f:
            f.write(text)
    # The output is committed: the project's layout, as for any other
    # source; the style file is named so output elsewhere gets it too.
    fmt = shutil.which('clang-format')
    if fmt:
        style = os.path.join(os.path.dirname(here), '.clang-format')
        subprocess.run([fmt, '-i', '--style=file:' + style,
                        os.path.join(out, 'posix_wrappers.h'),
                        os.path.join(out, 'posix_wrappers.c')], check=True)


main()
