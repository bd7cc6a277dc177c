#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes mpi_wrappers.h and mpi_wrappers.c: the MPI_x/PMPI_x wrapper pair
of every measured MPI call, from the table below.  The output is committed,
so building lwm2 needs no Python; run `python3 mpi_gen.py` in preload/
after changing the table.

Parameter types are tokens, so one entry gives the MPI-4 large-count
variant (_c) as well:
  B buffer, N count (int; MPI_Count in _c), NS count array, DS displacement
  array (int; MPI_Aint in _c), H handle, HS handle array, I int, IP int*,
  ST status*, STS status array, RQ request*, RQS request array,
  OFF MPI_Offset, P other pointer, S const char*, DSA MPI_Aint array.

Kinds:
  call    count the call; `sr` (bytes sent/received, a struct lwm2_mpi_sr
          expression) evaluated after the call
  status  as call; the status is substituted when ignored and `sb` holds
          the bytes it reports
  ireq    as call, then the request is tracked with class and `rflags`
  preq    persistent init: counted without bytes; the request is tracked
          with the bytes (`sr`) each start moves
  custom  the body is lwm2_mpi_x_<name> in mpi_calls.c

msg: point-to-point messages (sent, received) a successful call moves
itself; a receive posted with a request counts when it completes, a
persistent send (LWM2_MPI_REQ_SEND) at each start.
"""
import re
import shutil
import subprocess
import sys

CTYPE = {
    'B': ('const void *', 'const void *'),
    'VB': ('void *', 'void *'),
    'N': ('int', 'lwm2_mpi_cnt'),
    'NS': ('const int *', 'const lwm2_mpi_cnt *'),
    'DS': ('const int *', 'const lwm2_mpi_cnt *'),
    'H': ('lwm2_mpi_h', 'lwm2_mpi_h'),
    'HS': ('const void *', 'const void *'),
    'I': ('int', 'int'),
    'IP': ('int *', 'int *'),
    'ST': ('void *', 'void *'),
    'STS': ('void *', 'void *'),
    'RQ': ('void *', 'void *'),
    'RQS': ('void *', 'void *'),
    'OFF': ('lwm2_mpi_cnt', 'lwm2_mpi_cnt'),
    'P': ('void *', 'void *'),
    'S': ('const char *', 'const char *'),
    'DSA': ('const lwm2_mpi_cnt *', 'const lwm2_mpi_cnt *'),  # MPI_Aint displacements
}

T = []


def w(name, params, kind, cls, sr=None, rflags='0', large=False, msg=(0, 0)):
    T.append(dict(name=name, params=params, kind=kind, cls=cls, sr=sr, rflags=rflags,
                  large=large, msg=msg))


P2P, COLL, RD, WR, META, OTHER = ('LWM2_MPI_P2P', 'LWM2_MPI_COLL', 'LWM2_MPI_IO_READ',
                                  'LWM2_MPI_IO_WRITE', 'LWM2_MPI_IO_META', 'LWM2_MPI_OTHER')
STATUS = 'LWM2_MPI_REQ_STATUS'
SEND = 'lwm2_mpi_sr(lwm2_mpi_bytes(&c, count, datatype), 0)'
NONE = None

# ---- point to point --------------------------------------------------------
SENDP = 'B buf, N count, H datatype, I dest, I tag, H comm'
for m in ('', 'B', 'S', 'R'):
    w(m + 'send' if m == '' else m + 'send', SENDP, 'call', P2P, SEND, large=True, msg=(1, 0))
    w('I' + m.lower() + 'send', SENDP + ', RQ request', 'ireq', P2P, SEND, large=True,
      msg=(1, 0))
    w(m + 'send_init' if m else 'Send_init', SENDP + ', RQ request', 'preq', P2P, SEND,
      'LWM2_MPI_REQ_SEND', large=True)
# the names above: Send Bsend Ssend Rsend, Isend Ibsend Issend Irsend, *_init
w('Recv', 'VB buf, N count, H datatype, I source, I tag, H comm, ST status', 'status', P2P,
  'lwm2_mpi_sr(0, sb)', large=True, msg=(0, 1))
w('Irecv', 'VB buf, N count, H datatype, I source, I tag, H comm, RQ request', 'ireq', P2P,
  NONE, STATUS, large=True)
w('Recv_init', 'VB buf, N count, H datatype, I source, I tag, H comm, RQ request', 'preq', P2P,
  NONE, STATUS, large=True)
SR = ('B sendbuf, N sendcount, H sendtype, I dest, I sendtag, VB recvbuf, N recvcount, '
      'H recvtype, I source, I recvtag, H comm')
w('Sendrecv', SR + ', ST status', 'status', P2P,
  'lwm2_mpi_sr(lwm2_mpi_bytes(&c, sendcount, sendtype), sb)', large=True, msg=(1, 1))
w('Isendrecv', SR + ', RQ request', 'ireq', P2P,
  'lwm2_mpi_sr(lwm2_mpi_bytes(&c, sendcount, sendtype), 0)', STATUS, large=True, msg=(1, 0))
SRR = 'VB buf, N count, H datatype, I dest, I sendtag, I source, I recvtag, H comm'
w('Sendrecv_replace', SRR + ', ST status', 'status', P2P, 'lwm2_mpi_sr(lwm2_mpi_bytes(&c, count, '
  'datatype), sb)', large=True, msg=(1, 1))
w('Isendrecv_replace', SRR + ', RQ request', 'ireq', P2P, SEND, STATUS, large=True, msg=(1, 0))
w('Probe', 'I source, I tag, H comm, ST status', 'call', P2P)
w('Iprobe', 'I source, I tag, H comm, IP flag, ST status', 'call', P2P)
w('Mprobe', 'I source, I tag, H comm, P message, ST status', 'call', P2P)
w('Improbe', 'I source, I tag, H comm, IP flag, P message, ST status', 'call', P2P)
w('Mrecv', 'VB buf, N count, H datatype, P message, ST status', 'status', P2P,
  'lwm2_mpi_sr(0, sb)', large=True, msg=(0, 1))
w('Imrecv', 'VB buf, N count, H datatype, P message, RQ request', 'ireq', P2P, NONE, STATUS,
  large=True)

# ---- completion and persistent start ----------------------------------------
w('Start', 'RQ request', 'custom', P2P)
w('Startall', 'I count, RQS array_of_requests', 'custom', P2P)
w('Wait', 'RQ request, ST status', 'custom', P2P)
w('Test', 'RQ request, IP flag, ST status', 'custom', P2P)
w('Waitall', 'I count, RQS array_of_requests, STS array_of_statuses', 'custom', P2P)
w('Testall', 'I count, RQS array_of_requests, IP flag, STS array_of_statuses', 'custom', P2P)
w('Waitany', 'I count, RQS array_of_requests, IP index, ST status', 'custom', P2P)
w('Testany', 'I count, RQS array_of_requests, IP index, IP flag, ST status', 'custom', P2P)
w('Waitsome', 'I incount, RQS array_of_requests, IP outcount, IP array_of_indices, '
  'STS array_of_statuses', 'custom', P2P)
w('Testsome', 'I incount, RQS array_of_requests, IP outcount, IP array_of_indices, '
  'STS array_of_statuses', 'custom', P2P)
w('Request_free', 'RQ request', 'custom', OTHER)

# ---- collectives: blocking, nonblocking (I), persistent (_init) ------------
def coll(name, params, sr, large=True):
    w(name, params, 'call', COLL, sr, large=large)
    w('I' + name[0].lower() + name[1:], params + ', RQ request', 'ireq', COLL, sr, large=large)
    w(name + '_init', params + ', H info, RQ request', 'preq', COLL, sr, large=large)


coll('Barrier', 'H comm', 'lwm2_mpi_sr(0, 0)', large=False)
coll('Bcast', 'VB buffer, N count, H datatype, I root, H comm',
     'lwm2_mpi_b_bcast(&c, count, datatype, root, comm)')
G = 'B sendbuf, N sendcount, H sendtype, VB recvbuf, N recvcount, H recvtype'
coll('Gather', G + ', I root, H comm', 'lwm2_mpi_b_gather(&c, sendbuf, sendcount, sendtype, '
     'recvbuf, recvcount, recvtype, root, comm)')
coll('Gatherv', 'B sendbuf, N sendcount, H sendtype, VB recvbuf, NS recvcounts, DS displs, '
     'H recvtype, I root, H comm', 'lwm2_mpi_b_gatherv(&c, sendbuf, sendcount, sendtype, '
     'recvbuf, recvcounts, WIDE, recvtype, root, comm)')
coll('Scatter', G + ', I root, H comm', 'lwm2_mpi_b_scatter(&c, sendbuf, sendcount, sendtype, '
     'recvbuf, recvcount, recvtype, root, comm)')
coll('Scatterv', 'B sendbuf, NS sendcounts, DS displs, H sendtype, VB recvbuf, N recvcount, '
     'H recvtype, I root, H comm', 'lwm2_mpi_b_scatterv(&c, sendbuf, sendcounts, WIDE, '
     'sendtype, recvbuf, recvcount, recvtype, root, comm)')
coll('Allgather', G + ', H comm', 'lwm2_mpi_b_allgather(&c, sendbuf, sendcount, sendtype, '
     'recvcount, recvtype, comm)')
coll('Allgatherv', 'B sendbuf, N sendcount, H sendtype, VB recvbuf, NS recvcounts, DS displs, '
     'H recvtype, H comm', 'lwm2_mpi_b_allgatherv(&c, sendbuf, sendcount, sendtype, recvcounts, '
     'WIDE, recvtype, comm)')
coll('Alltoall', G + ', H comm', 'lwm2_mpi_b_alltoall(&c, sendbuf, sendcount, sendtype, '
     'recvcount, recvtype, comm)')
V = ('B sendbuf, NS sendcounts, DS sdispls, H sendtype, VB recvbuf, NS recvcounts, '
     'DS rdispls, H recvtype, H comm')
coll('Alltoallv', V, 'lwm2_mpi_b_alltoallv(&c, sendbuf, sendcounts, sendtype, recvcounts, WIDE, '
     'recvtype, comm)')
W = ('B sendbuf, NS sendcounts, DS sdispls, HS sendtypes, VB recvbuf, NS recvcounts, '
     'DS rdispls, HS recvtypes, H comm')
coll('Alltoallw', W, 'lwm2_mpi_b_alltoallw(&c, sendbuf, sendcounts, sendtypes, recvcounts, '
     'WIDE, recvtypes, comm)')
R = 'B sendbuf, VB recvbuf, N count, H datatype, H op'
coll('Reduce', R + ', I root, H comm', 'lwm2_mpi_b_reduce(&c, count, datatype, root, comm)')
coll('Allreduce', R + ', H comm', 'lwm2_mpi_sr_same(lwm2_mpi_bytes(&c, count, datatype))')
coll('Reduce_scatter', 'B sendbuf, VB recvbuf, NS recvcounts, H datatype, H op, H comm',
     'lwm2_mpi_b_reduce_scatter(&c, recvcounts, WIDE, datatype, comm)')
coll('Reduce_scatter_block', 'B sendbuf, VB recvbuf, N recvcount, H datatype, H op, H comm',
     'lwm2_mpi_b_reduce_scatter_block(&c, recvcount, datatype, comm)')
coll('Scan', R + ', H comm', 'lwm2_mpi_sr_same(lwm2_mpi_bytes(&c, count, datatype))')
coll('Exscan', R + ', H comm', 'lwm2_mpi_b_exscan(&c, count, datatype, comm)')
coll('Neighbor_allgather', G + ', H comm', 'lwm2_mpi_b_nbr(&c, 0, sendcount, sendtype, recvcount, '
     'recvtype, comm)')
coll('Neighbor_allgatherv', 'B sendbuf, N sendcount, H sendtype, VB recvbuf, NS recvcounts, '
     'DS displs, H recvtype, H comm', 'lwm2_mpi_b_nbrv(&c, sendcount, NULL, sendtype, '
     'recvcounts, WIDE, recvtype, comm)')
coll('Neighbor_alltoall', G + ', H comm', 'lwm2_mpi_b_nbr(&c, 1, sendcount, sendtype, recvcount, '
     'recvtype, comm)')
coll('Neighbor_alltoallv', V, 'lwm2_mpi_b_nbrv(&c, 0, sendcounts, sendtype, recvcounts, WIDE, '
     'recvtype, comm)')
# MPI_Neighbor_alltoallw takes MPI_Aint displacements in every variant.
coll('Neighbor_alltoallw', W.replace('DS ', 'DSA '), 'lwm2_mpi_b_nbrw(&c, sendcounts, sendtypes, '
     'recvcounts, WIDE, recvtypes, comm)')

# ---- MPI-IO -----------------------------------------------------------------
RDSR = 'lwm2_mpi_sr(0, sb)'
WRSR = 'lwm2_mpi_sr(lwm2_mpi_bytes(&c, count, datatype), 0)'
for at in ('', '_at'):
    off = 'H fh, OFF offset, ' if at else 'H fh, '
    for coll_ in ('', '_all'):
        n = at + coll_
        w('File_read' + n, off + 'VB buf, N count, H datatype, ST status', 'status', RD, RDSR,
          large=True)
        w('File_write' + n, off + 'B buf, N count, H datatype, ST status', 'call', WR, WRSR,
          large=True)
        w('File_iread' + n, off + 'VB buf, N count, H datatype, RQ request', 'ireq', RD, NONE,
          STATUS, large=True)
        w('File_iwrite' + n, off + 'B buf, N count, H datatype, RQ request', 'ireq', WR, WRSR,
          large=True)
for sh in ('_shared', '_ordered'):
    w('File_read' + sh, 'H fh, VB buf, N count, H datatype, ST status', 'status', RD, RDSR,
      large=True)
    w('File_write' + sh, 'H fh, B buf, N count, H datatype, ST status', 'call', WR, WRSR,
      large=True)
w('File_iread_shared', 'H fh, VB buf, N count, H datatype, RQ request', 'ireq', RD, NONE, STATUS,
  large=True)
w('File_iwrite_shared', 'H fh, B buf, N count, H datatype, RQ request', 'ireq', WR, WRSR,
  large=True)
# split collectives: bytes written at _begin, bytes read at _end from its status
for sp, off in (('_all', 'H fh, '), ('_at_all', 'H fh, OFF offset, '), ('_ordered', 'H fh, ')):
    w('File_read' + sp + '_begin', off + 'VB buf, N count, H datatype', 'call', RD, NONE,
      large=True)
    w('File_write' + sp + '_begin', off + 'B buf, N count, H datatype', 'call', WR, WRSR,
      large=True)
    w('File_read' + sp + '_end', 'H fh, VB buf, ST status', 'status', RD, RDSR)
    w('File_write' + sp + '_end', 'H fh, B buf, ST status', 'call', WR, NONE)
w('File_open', 'H comm, S filename, I amode, H info, P fh', 'call', META)
w('File_close', 'P fh', 'call', META)
w('File_sync', 'H fh', 'call', META)
w('File_set_view', 'H fh, OFF disp, H etype, H filetype, S datarep, H info', 'call', META)

# ---- environment -----------------------------------------------------------
w('Init', 'P argc, P argv', 'custom', OTHER)
w('Init_thread', 'P argc, P argv, I required, IP provided', 'custom', OTHER)
w('Finalize', '', 'custom', OTHER)


def parse(params, large):
    out = []
    for p in filter(None, (x.strip() for x in params.split(','))):
        tok, name = p.split()
        out.append((CTYPE[tok][1 if large else 0], name, tok))
    return out


def fix_names():
    # the loop above built 'Bsend_init' etc. from the mode letter; normalise
    for e in T:
        n = e['name']
        n = n[0].upper() + n[1:]
        e['name'] = n


fix_names()


def emit():
    h, c = [], []
    seen = set()
    for e in T:
        variants = [(e['name'], False)]
        if e['large']:
            variants.append((e['name'] + '_c', True))
        for name, large in variants:
            if name in seen:
                sys.exit('duplicate ' + name)
            seen.add(name)
            ps = parse(e['params'], large)
            decl = ', '.join('%s%s%s' % (t, '' if t.endswith('*') else ' ', n)
                             for t, n, _ in ps) or 'void'
            args = ', '.join(n for _, n, _ in ps)
            ftype = 'lwm2_mpi_fn_' + name
            h.append('typedef int (*%s)(%s);' % (ftype, decl))
            if e['kind'] == 'custom':
                h.append('int lwm2_mpi_x_%s(%s f%s%s);' % (name, ftype, ', ' if ps else '', decl
                                                           if ps else ''))
            c.append(body(e, name, large, ps, decl, args, ftype))
    return h, c


def body(e, name, large, ps, decl, args, ftype):
    kind, cls = e['kind'], e['cls']
    sr = e['sr']
    if sr:
        sr = sr.replace('WIDE', '1' if large else '0')
    L = []
    L.append('static _Atomic(void *) next_%s[2];' % name)
    L.append('')
    L.append('LWM2_MPI_HOT int w_%s(int pmpi%s%s)' % (name, ', ' if ps else '', decl if ps else
                                                        ''))
    L.append('{')
    L.append('\t%s f = (%s)lwm2_mpi_next(&next_%s[pmpi], pmpi, "%s");' % (ftype, ftype, name,
                                                                         name))
    L.append('')
    L.append('\tif (LWM2_UNLIKELY(!f))')
    L.append('\t\treturn lwm2_mpi_unresolved("%s");' % name)
    if kind == 'custom':
        L.append('\treturn lwm2_mpi_x_%s(f%s%s);' % (name, ', ' if args else '', args))
        L.append('}')
        return '\n'.join(L)
    L.append('\tstruct lwm2_mpi_call c;')
    L.append('\tif (!lwm2_mpi_begin(&c))')
    L.append('\t\treturn f(%s);' % args)
    if kind == 'status':
        L.append('\tunsigned char own[LWM2_MPI_STATUS_MAX] __attribute__((aligned(8)));')
        L.append('\tvoid *st = lwm2_mpi_status(&c, status, own);')
        L.append('\tint rc = f(%s);' % ', '.join('st' if n == 'status' else n for _, n, _ in ps))
    else:
        L.append('\tint rc = f(%s);' % args)
    L.append('\tuint64_t ticks = lwm2_mpi_stop(&c);')
    if kind == 'status':
        L.append('\tuint64_t sb = rc == 0 ? lwm2_mpi_status_bytes(c.abi, st) : 0;')
    if kind == 'preq':
        L.append('\tlwm2_mpi_count(&c, %s, ticks, 0, 0);' % cls)
        L.append('\tif (rc == 0) {')
        if sr:
            L.append('\t\tstruct lwm2_mpi_sr b = %s;' % sr)
        else:
            L.append('\t\tstruct lwm2_mpi_sr b = lwm2_mpi_sr(0, 0);')
        L.append('\t\tlwm2_mpi_req_track(c.abi, request, %s, LWM2_MPI_REQ_PERSISTENT | %s, '
                 'b.sent, b.recv);' % (cls, e['rflags']))
        L.append('\t}')
    else:
        if sr:
            L.append('\tstruct lwm2_mpi_sr b = rc == 0 ? %s : lwm2_mpi_sr(0, 0);' % sr)
            L.append('\tlwm2_mpi_count(&c, %s, ticks, b.sent, b.recv);' % cls)
        else:
            L.append('\tlwm2_mpi_count(&c, %s, ticks, 0, 0);' % cls)
        if e['msg'] != (0, 0):
            L.append('\tif (rc == 0)')
            L.append('\t\tlwm2_mpi_msgs(c.t, %d, %d);' % e['msg'])
        if kind == 'ireq':
            L.append('\tif (rc == 0)')
            L.append('\t\tlwm2_mpi_req_track(c.abi, request, %s, %s, 0, 0);' % (cls, e['rflags']))
    L.append('\treturn rc;')
    L.append('}')
    L.append('')
    L.append('LWM2_EXPORT int MPI_%s(%s)' % (name, decl))
    L.append('{')
    L.append('\treturn w_%s(0%s%s);' % (name, ', ' if args else '', args))
    L.append('}')
    L.append('')
    L.append('LWM2_EXPORT int PMPI_%s(%s)' % (name, decl))
    L.append('{')
    L.append('\treturn w_%s(1%s%s);' % (name, ', ' if args else '', args))
    L.append('}')
    return '\n'.join(L)


def exports_custom(name, decl, args):
    return ('\nLWM2_EXPORT int MPI_%s(%s)\n{\n\treturn w_%s(0%s%s);\n}\n\n'
            'LWM2_EXPORT int PMPI_%s(%s)\n{\n\treturn w_%s(1%s%s);\n}' %
            (name, decl, name, ', ' if args else '', args, name, decl, name,
             ', ' if args else '', args))


def main():
    h, c = emit()
    hdr = ['/* SPDX-License-Identifier: GPL-2.0-or-later */',
           '/* Generated by mpi_gen.py from its table: edit the table, not this file. */',
           '#ifndef LWM2_MPI_WRAPPERS_H', '#define LWM2_MPI_WRAPPERS_H', '',
           '#include "mpi_abi.h"', ''] + h + ['', '#endif /* LWM2_MPI_WRAPPERS_H */', '']
    src = ['/* SPDX-License-Identifier: GPL-2.0-or-later */',
           '/* Generated by mpi_gen.py from its table: edit the table, not this file. */',
           '#include "mpi_wrappers.h"', '']
    for block in c:
        src.append(block)
        if 'lwm2_mpi_x_' in block and 'LWM2_EXPORT' not in block:
            m = re.search(r'LWM2_MPI_HOT int w_(\w+)\(int pmpi(?:, )?(.*)\)\n', block)
            name, decl = m.group(1), m.group(2) or 'void'
            args = re.search(r'return lwm2_mpi_x_\w+\(f(?:, )?(.*)\);', block).group(1)
            src.append(exports_custom(name, decl, args))
        src.append('')
    # The exported interposers get prototypes of their own: the sources
    # include no implementation's mpi.h to take them from.
    protos = re.findall(r'^(LWM2_EXPORT int P?MPI_\w+\(.*\))$', '\n'.join(src), re.M)
    hdr[-2:-2] = ['/* The exported MPI_x and PMPI_x entry points. */'] + \
        [p + ';' for p in protos] + ['']
    with open('mpi_wrappers.h', 'w') as f:
        f.write('\n'.join(hdr))
    with open('mpi_wrappers.c', 'w') as f:
        f.write('\n'.join(src))
    # The output is committed: give it the project's layout, as for any
    # other source (`make format-check` covers it).
    if shutil.which('clang-format'):
        subprocess.run(['clang-format', '-i', 'mpi_wrappers.h', 'mpi_wrappers.c'], check=True)


main()
