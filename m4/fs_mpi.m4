# SPDX-License-Identifier: GPL-3.0-or-later
# fs_mpi.m4: which MPI fftshard is built with, the parallel HDF5 built for
# it, and the launcher its tests use.
#
# Any MPI is taken: what the compiler ($CC, a wrapper such as mpicc or
# Cray's cc) brings decides the flavour. The one thing refused is a link
# holding two MPI libraries (HDF5 built for another MPI than the
# compiler's), which builds but fails at run time.

# FS_MPI_FLAVOUR: MPI_FLAVOUR (mpich, openmpi, intel, mvapich, cray-mpich or
# other) and MPI_VERSION_STRING, from the macros mpi.h defines; stops when
# $CC cannot build an MPI program.
AC_DEFUN([FS_MPI_FLAVOUR], [
AC_MSG_CHECKING([that $CC compiles and links MPI programs])
AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[MPI_Init(0, 0); MPI_Finalize();]])],
  [AC_MSG_RESULT([yes])],
  [AC_MSG_RESULT([no])
   AC_MSG_ERROR([$CC cannot build an MPI program (mpi.h, MPI_Init). Name your MPI's compiler wrapper: ./configure CC=mpicc (on a cluster after 'module load' of the MPI; Debian: install mpich and libmpich-dev, or openmpi-bin and libopenmpi-dev)])])
AC_MSG_CHECKING([which MPI $CC compiles against])
AC_LANG_CONFTEST([AC_LANG_SOURCE([[#include <mpi.h>]])])
fs_mpi_macros=`$CC $CPPFLAGS -E -dM conftest.$ac_ext 2>/dev/null`
fs_mpi_macro() {
  AS_ECHO(["$fs_mpi_macros"]) | sed -n "s/^#define ${1} //p" | sed 's/^"//; s/"$//' | head -n 1
}
MPI_FLAVOUR=other
MPI_VERSION_STRING="MPI `fs_mpi_macro MPI_VERSION`.`fs_mpi_macro MPI_SUBVERSION`"
AS_IF([test -n "`fs_mpi_macro OMPI_MAJOR_VERSION`"],
  [MPI_FLAVOUR=openmpi
   MPI_VERSION_STRING="Open MPI `fs_mpi_macro OMPI_MAJOR_VERSION`.`fs_mpi_macro OMPI_MINOR_VERSION`.`fs_mpi_macro OMPI_RELEASE_VERSION`"],
  [test -n "`fs_mpi_macro I_MPI_VERSION`"],
  [MPI_FLAVOUR=intel; MPI_VERSION_STRING="Intel MPI `fs_mpi_macro I_MPI_VERSION`"],
  [test -n "`fs_mpi_macro MVAPICH2_VERSION`"],
  [MPI_FLAVOUR=mvapich; MPI_VERSION_STRING="MVAPICH2 `fs_mpi_macro MVAPICH2_VERSION`"],
  [test -n "`fs_mpi_macro CRAY_MPICH_VERSION`"],
  [MPI_FLAVOUR=cray-mpich; MPI_VERSION_STRING="Cray MPICH `fs_mpi_macro CRAY_MPICH_VERSION`"],
  [test -n "`fs_mpi_macro MPICH_VERSION`"],
  [MPI_FLAVOUR=mpich; MPI_VERSION_STRING="MPICH `fs_mpi_macro MPICH_VERSION`"])
AC_MSG_RESULT([$MPI_FLAVOUR ($MPI_VERSION_STRING)])
AC_SUBST([MPI_FLAVOUR])
])

# FS_MPI_LAUNCHER: MPIEXEC, the launcher the tests run with (the user's, or
# the flavour's own by name: mpiexec.mpich, mpirun.openmpi, ...; srun when
# there is no other), and MPI_LAUNCHER_KIND: hydra, openmpi, slurm or other.
AC_DEFUN([FS_MPI_LAUNCHER], [
AC_ARG_VAR([MPIEXEC], [launcher of the tests, matching the MPI of CC (default by flavour: mpiexec.mpich, mpirun.openmpi, ...; srun)])
AS_CASE([$MPI_FLAVOUR],
  [openmpi], [fs_launchers="mpirun.openmpi mpiexec.openmpi mpirun mpiexec srun"],
  [fs_launchers="mpiexec.mpich mpiexec.hydra mpiexec mpirun srun"])
AS_IF([test -n "$MPIEXEC"],
  [AS_CASE([$MPIEXEC], [/*], [], [AC_PATH_PROG([fs_mpiexec_path], [$MPIEXEC], [])
                                  AS_IF([test -n "$fs_mpiexec_path"], [MPIEXEC=$fs_mpiexec_path])])],
  [AC_PATH_PROGS([MPIEXEC], [$fs_launchers], [])])
AS_IF([test -z "$MPIEXEC"],
  [AC_MSG_ERROR([no launcher for $MPI_FLAVOUR found (tried $fs_launchers); name it with MPIEXEC=])])
AC_MSG_CHECKING([what kind of launcher $MPIEXEC is])
fs_launcher_says=`$MPIEXEC --version 2>&1 | head -n 5`
AS_CASE([`basename "$MPIEXEC"`],
  [srun*], [MPI_LAUNCHER_KIND=slurm],
  [AS_CASE([$fs_launcher_says],
     [*HYDRA*|*Hydra*], [MPI_LAUNCHER_KIND=hydra],
     [*"Open MPI"*|*OpenRTE*], [MPI_LAUNCHER_KIND=openmpi],
     [*slurm*], [MPI_LAUNCHER_KIND=slurm],
     [MPI_LAUNCHER_KIND=other])])
AC_MSG_RESULT([$MPI_LAUNCHER_KIND])
dnl A launcher of the other flavour starts ranks that cannot find each
dnl other: every test would fail.
AS_IF([test "$MPI_LAUNCHER_KIND" = openmpi && test "$MPI_FLAVOUR" != openmpi ||
       test "$MPI_LAUNCHER_KIND" = hydra && test "$MPI_FLAVOUR" = openmpi],
  [AC_MSG_ERROR([$MPIEXEC is a $MPI_LAUNCHER_KIND launcher but $CC is $MPI_FLAVOUR: name the launcher of $CC's MPI with MPIEXEC= (Debian: mpiexec.mpich for MPICH, mpirun.openmpi for Open MPI)])])
AC_SUBST([MPI_LAUNCHER_KIND])
])

# FS_HDF5_TRY(WHERE): whether HDF5_CFLAGS and HDF5_LIBS give a parallel HDF5
# that links with $CC holding one MPI library; fs_hdf5_why says why not.
AC_DEFUN([FS_HDF5_TRY], [
fs_hdf5_ok=no
save_CPPFLAGS=$CPPFLAGS; save_LIBS=$LIBS
CPPFLAGS="$CPPFLAGS $HDF5_CFLAGS"; LIBS="$HDF5_LIBS $LIBS"
AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <hdf5.h>
#ifndef H5_HAVE_PARALLEL
#error serial HDF5
#endif]], [[]])],
  [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <hdf5.h>
#if defined(OMPI_MAJOR_VERSION) != $fs_mpi_is_ompi
#error another mpi.h
#endif]], [[]])],
    [AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <hdf5.h>]],
        [[MPI_Init(0, 0); hid_t p = H5Pcreate(H5P_FILE_ACCESS); H5Pset_fapl_mpio(p, MPI_COMM_WORLD, MPI_INFO_NULL);]])],
       [FS_MPI_LIBRARIES([conftest$EXEEXT])
        AS_IF([test -n "$fs_mpi_two"],
              [fs_hdf5_why="$1 links two MPI libraries: $fs_mpi_two"],
              [test -n "$fs_mpi_family" && test -n "$fs_mpi_families" && test "$fs_mpi_families" != "$fs_mpi_family"],
              [fs_mpi_two=`AS_ECHO(["$fs_mpi_libs"]) | tr '\n' ' '`
               fs_hdf5_why="$1 links $fs_mpi_families's library in place of $CC's ($fs_mpi_family)"],
              [fs_hdf5_ok=yes])],
       [fs_hdf5_why="$1 does not link with $CC"])],
    [fs_mpi_two="the mpi.h of another MPI"
     fs_hdf5_why="$1 brings the mpi.h of another MPI than $CC's"])],
  [fs_hdf5_why="$1 is not parallel HDF5 (or hdf5.h is not there)"])
CPPFLAGS=$save_CPPFLAGS; LIBS=$save_LIBS
])

# FS_MPI_LIBRARIES(PROGRAM): fs_mpi_libs, the MPI libraries PROGRAM loads
# (by ldd; none known for a static program or without ldd), and fs_mpi_two,
# empty unless they are of two MPIs (two families, or one name from two
# directories).
AC_DEFUN([FS_MPI_LIBRARIES], [
fs_mpi_libs=
fs_mpi_two=
AS_IF([command -v ldd >/dev/null 2>&1], [
  fs_mpi_libs=`ldd $1 2>/dev/null | $AWK '$[1] ~ /^lib(mpi|mpich|mpi_cray|mpi_intel|open-pal)(\.|_gnu|_cray)/ && $[1] !~ /gtl|usempi|mpifh|mpi_cxx/ { print $[1] "=" $[3] }' | sort -u`
  fs_mpi_families=`AS_ECHO(["$fs_mpi_libs"]) | $AWK -F= 'NF { f = ($[1] ~ /^lib(mpi\.so\.4|open-pal)/) ? "Open MPI" : "MPICH-family"; print f }' | sort -u`
  fs_mpi_names=`AS_ECHO(["$fs_mpi_libs"]) | $AWK -F= 'NF { print $[1] }'`
  AS_IF([test `AS_ECHO(["$fs_mpi_families"]) | grep -c .` -gt 1 ||
         test `AS_ECHO(["$fs_mpi_names"]) | sort | uniq -d | grep -c .` -gt 0],
    [fs_mpi_two=`AS_ECHO(["$fs_mpi_libs"]) | tr '\n' ' '`])])
])

# FS_PARALLEL_HDF5: HDF5_CFLAGS and HDF5_LIBS of the parallel HDF5 built for
# $CC's MPI: the user's (HDF5_CFLAGS/HDF5_LIBS, or --with-hdf5=DIR), else the
# first that fits of pkg-config's hdf5-FLAVOUR and hdf5, h5pcc, and what
# $CC itself brings (Cray's cc with cray-hdf5-parallel loaded).
AC_DEFUN([FS_PARALLEL_HDF5], [
AC_ARG_VAR([HDF5_CFLAGS], [C compiler flags of parallel HDF5, overriding the search])
AC_ARG_VAR([HDF5_LIBS], [linker flags of parallel HDF5, overriding the search])
AC_ARG_WITH([hdf5],
  [AS_HELP_STRING([--with-hdf5=DIR], [parallel HDF5 installed in DIR (DIR/include, DIR/lib or DIR/lib64)])],
  [], [with_hdf5=])
AC_MSG_CHECKING([for parallel HDF5 built for $MPI_FLAVOUR])
dnl The MPI the program must load: Open MPI's, or one of MPICH's family
dnl (MPICH, Intel MPI, MVAPICH, Cray MPICH share its library's ABI).
AS_CASE([$MPI_FLAVOUR], [openmpi], [fs_mpi_is_ompi=1; fs_mpi_family="Open MPI"],
                        [other], [fs_mpi_is_ompi=0; fs_mpi_family=],
                        [fs_mpi_is_ompi=0; fs_mpi_family=MPICH-family])
fs_hdf5_tried=
fs_hdf5_from=
AS_IF([test -n "$HDF5_CFLAGS$HDF5_LIBS"],
  [FS_HDF5_TRY([HDF5_CFLAGS/HDF5_LIBS])
   fs_hdf5_from="HDF5_CFLAGS/HDF5_LIBS"; fs_hdf5_tried=$fs_hdf5_why],
  [test -n "$with_hdf5" && test "$with_hdf5" != yes && test "$with_hdf5" != no],
  [fs_hdf5_lib=$with_hdf5/lib
   test -d "$with_hdf5/lib64" && test ! -e "$with_hdf5/lib/libhdf5.so" && fs_hdf5_lib=$with_hdf5/lib64
   HDF5_CFLAGS="-I$with_hdf5/include"
   HDF5_LIBS="-L$fs_hdf5_lib -Wl,-rpath,$fs_hdf5_lib -lhdf5"
   FS_HDF5_TRY([--with-hdf5=$with_hdf5])
   fs_hdf5_from="--with-hdf5=$with_hdf5"; fs_hdf5_tried=$fs_hdf5_why],
  [AS_CASE([$MPI_FLAVOUR], [openmpi], [fs_hdf5_modules="hdf5-openmpi hdf5"],
                           [mpich], [fs_hdf5_modules="hdf5-mpich hdf5"],
                           [fs_hdf5_modules="hdf5"])
   for fs_m in $fs_hdf5_modules; do
     test -n "$PKG_CONFIG" && $PKG_CONFIG --exists $fs_m 2>/dev/null || continue
     HDF5_CFLAGS=`$PKG_CONFIG --cflags $fs_m`; HDF5_LIBS=`$PKG_CONFIG --libs $fs_m`
     FS_HDF5_TRY([pkg-config $fs_m])
     AS_IF([test $fs_hdf5_ok = yes], [fs_hdf5_from="pkg-config $fs_m"; break])
     fs_hdf5_tried="$fs_hdf5_tried
    $fs_hdf5_why"
   done
   AS_IF([test $fs_hdf5_ok != yes && command -v h5pcc >/dev/null 2>&1],
     [fs_h5pcc=`h5pcc -show 2>/dev/null`
      HDF5_CFLAGS=`for w in $fs_h5pcc; do case $w in -I*|-D*) printf '%s ' "$w";; esac; done`
      HDF5_LIBS=`for w in $fs_h5pcc; do case $w in -L*|-l*|-Wl,*|*.a|*.so) printf '%s ' "$w";; esac; done`
      FS_HDF5_TRY([h5pcc])
      AS_IF([test $fs_hdf5_ok = yes], [fs_hdf5_from=h5pcc], [fs_hdf5_tried="$fs_hdf5_tried
    $fs_hdf5_why"])])
   AS_IF([test $fs_hdf5_ok != yes],
     [HDF5_CFLAGS=; HDF5_LIBS=
      FS_HDF5_TRY([$CC alone])
      AS_IF([test $fs_hdf5_ok != yes], [HDF5_LIBS=-lhdf5; FS_HDF5_TRY([$CC with -lhdf5])])
      AS_IF([test $fs_hdf5_ok = yes], [fs_hdf5_from="$CC itself"])])])
AS_IF([test $fs_hdf5_ok = yes],
  [AC_MSG_RESULT([yes, from $fs_hdf5_from])],
  [AC_MSG_RESULT([no])
   AS_IF([test -n "$fs_mpi_two"],
     [AC_MSG_ERROR([the HDF5 found is built for another MPI than $CC ($MPI_VERSION_STRING): $fs_hdf5_tried
Use the parallel HDF5 built for the same MPI as $CC: on Debian libhdf5-mpich-dev for MPICH or libhdf5-openmpi-dev for Open MPI (pkg-config hdf5-mpich / hdf5-openmpi); on a cluster 'module load' the HDF5 of this MPI and give --with-hdf5=DIR; or build with the compiler this HDF5 was built with (CC=h5pcc, or the MPI named by 'h5pcc -showconfig').])],
     [AC_MSG_ERROR([no parallel HDF5 for $CC ($MPI_VERSION_STRING) found:${fs_hdf5_tried:+ $fs_hdf5_tried}
Install the parallel HDF5 of this MPI (Debian: libhdf5-mpich-dev or libhdf5-openmpi-dev), or say where it is: --with-hdf5=DIR, or HDF5_CFLAGS and HDF5_LIBS.])])])
])

# FS_MPI_ONE_LIBRARY: says which MPI library the program will load (the
# check itself is FS_HDF5_TRY's).
AC_DEFUN([FS_MPI_ONE_LIBRARY], [
AC_MSG_CHECKING([the MPI library fftshard will load])
AS_IF([test -n "$fs_mpi_libs"],
  [AC_MSG_RESULT([`AS_ECHO(["$fs_mpi_libs"]) | sed 's/=.*//' | tr '\n' ' '`(one MPI)])],
  [AC_MSG_RESULT([not known (static, or no ldd)])])
])

# FS_HDF5_HL: HDF5's high-level library (dimension scales, H5DS) beside the
# parallel HDF5 FS_PARALLEL_HDF5 found: libhdf5_hl in the same directory for
# every flavour (hdf5/mpich, hdf5/openmpi, --with-hdf5's lib), so -lhdf5_hl
# goes before -lhdf5 (or before libhdf5.a/.so named whole); with neither
# named (the compiler brings HDF5 itself) it goes first.
AC_DEFUN([FS_HDF5_HL], [
AC_MSG_CHECKING([for HDF5's dimension scales (H5DSattach_scale in -lhdf5_hl)])
fs_hdf5_hl_libs=`AS_ECHO([" $HDF5_LIBS "]) | sed 's/ -lhdf5 / -lhdf5_hl -lhdf5 /; s,\( [[^ ]]*/\)libhdf5\.\(a\|so\) ,\1libhdf5_hl.\2\1libhdf5.\2 ,'`
AS_CASE([$fs_hdf5_hl_libs], [*hdf5_hl*], [], [fs_hdf5_hl_libs="-lhdf5_hl $HDF5_LIBS"])
fs_save_CPPFLAGS=$CPPFLAGS; fs_save_LIBS=$LIBS
CPPFLAGS="$CPPFLAGS $HDF5_CFLAGS"; LIBS="$fs_hdf5_hl_libs $LIBS"
AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <hdf5_hl.h>]], [[return H5DSattach_scale(0, 0, 0) < 0;]])],
  [AC_MSG_RESULT([yes])
   HDF5_LIBS=`AS_ECHO(["$fs_hdf5_hl_libs"]) | sed 's/^ *//; s/ *$//'`],
  [AC_MSG_RESULT([no])
   AC_MSG_ERROR([HDF5's high-level library (libhdf5_hl, dimension scales) not found beside the HDF5 of $fs_hdf5_from ($HDF5_LIBS): install the package of this HDF5 that brings it (Debian: libhdf5-mpich-dev or libhdf5-openmpi-dev), or name it in HDF5_LIBS])])
CPPFLAGS=$fs_save_CPPFLAGS; LIBS=$fs_save_LIBS
])
