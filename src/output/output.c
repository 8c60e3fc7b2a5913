/* SPDX-License-Identifier: GPL-3.0-or-later */
/* output: see output.h. */
#include "config.h"

#include "output/output.h"

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/collective.h"
#include "core/signals.h"
#include "io/h5scales.h"
#include "output/destinations.h"
#include "output/space.h"
#include "plan/domain.h"
#include "report/report.h"

/* Whether the dataset at `inner` would lie inside the one at `outer`. */
static int inside(const char *outer, const char *inner)
{
    size_t n = strlen(outer);
    return strncmp(outer, inner, n) == 0 && inner[n] == '/';
}

/* What OUTPUT gets: every result, then the stages' groups; *nresults
 * (out) of them are datasets. Returns how many. */
static int result_paths(const fs_output *out, const char **paths, int *nresults)
{
    int n = 0;
    for (int i = 0; i < out->layout.nresults; i++)
        paths[n++] = out->layout.results[i];
    *nresults = n;
    for (int g = 0; g < out->layout.ngroups; g++)
        paths[n++] = out->layout.groups[g];
    return n;
}

/* How a message names path i of result_paths, in buf. */
static const char *result_name(const fs_output *out, const char **paths, int i, int nresults,
                               char *buf, size_t size)
{
    if (i < nresults) {
        int in = out->layout.result_input[i];
        snprintf(buf, size, "%s:%s%s", out->in.inputs[in].file, paths[i],
                 out->in.infos[in].slice.text); /* "" unsliced */
    } else {
        snprintf(buf, size, "the spectrum %s", paths[i]);
    }
    return buf;
}

/* Rank 0, --add: every result needs a place in `file` (OUTPUT, or its
 * copy) that its other contents leave free (a dataset there, or a
 * spectrum's group, only with --force, which replaces it, and never a
 * coordinate that another dataset uses), reached through no link and only
 * through groups. */
static fs_status check_add_paths(const fs_output *out, const char *file)
{
    const fs_output_options *o = out->opts;
    const char *paths[out->layout.nresults + out->layout.ngroups + 1];
    int results = 0, n = result_paths(out, paths, &results);
    for (int i = 0; i < n; i++) {
        const char *p = paths[i];
        fs_h5_path_state state;
        fs_status ret = fs_h5_output_path_state(file, o->file, p, &state);
        if (ret != FS_OK)
            return ret;
        /* What would be replaced may be a coordinate of a dataset that stays. */
        if ((state == FS_H5_PATH_DATASET || (i >= results && state == FS_H5_PATH_OTHER)) &&
            (ret = fs_h5_coords_in_use(file, o->file, p)) != FS_OK)
            return ret;
        if (i >= results && state == FS_H5_PATH_BLOCKED)
            return fs_error_set(FS_ERR_OUTPUT, "%s:%s: the file holds a dataset or another object "
                                "that is not a group on the way; --add writes only inside groups",
                                o->file, p);
        if (i >= results && state != FS_H5_PATH_FREE && !o->force)
            return fs_error_set(FS_ERR_OUTPUT, "%s:%s: the file holds a spectrum or another object "
                                "there; use --force to replace it", o->file, p);
        if (i >= results)
            continue; /* --force: replaced */
        if (state == FS_H5_PATH_DATASET && !o->force)
            return fs_error_set(FS_ERR_OUTPUT, "%s:%s: the dataset exists; use --force to replace "
                                "it", o->file, p);
        if (state == FS_H5_PATH_OTHER || state == FS_H5_PATH_BLOCKED)
            return fs_error_set(FS_ERR_OUTPUT, "%s:%s: the file holds a group or another object "
                                "there or on the way; --add writes datasets only where there is "
                                "none or a dataset", o->file, p);
    }
    return FS_OK;
}

/* Rank 0: every result needs a place of its own in OUTPUT, and with --add
 * one that OUTPUT leaves free (check_add_paths). */
static fs_status check_paths_on_root(void *arg)
{
    const fs_output *out = arg;
    const fs_output_options *o = out->opts;
    const char *paths[out->layout.nresults + out->layout.ngroups + 1];
    int results = 0, n = result_paths(out, paths, &results);
    char what[2][FS_INPUT_NAME_MAX];
    for (int i = 0; i < n; i++) {
        const char *p = paths[i];
        for (int j = 0; j < i; j++) {
            const char *q = paths[j];
            if (strcmp(p, q) == 0 || inside(p, q) || inside(q, p))
                return fs_error_set(FS_ERR_USAGE, "%s and %s: both would be written to %s:%s; "
                                    "give each INPUT its own dataset path",
                                    result_name(out, paths, j, results, what[0], sizeof what[0]),
                                    result_name(out, paths, i, results, what[1], sizeof what[1]),
                                    o->file, strcmp(p, q) == 0 || inside(q, p) ? q : p);
        }
    }
    struct stat st;
    if (!o->add || stat(o->file, &st) != 0)
        return FS_OK; /* nothing to add to: created as without --add */
    return check_add_paths(out, o->file);
}

/* The attributes fftshard writes on a result (fftshard(1), FILES AND
 * CONVENTIONS; "offset" and "shards" with --shard-output). An input
 * attribute of one of these names is not copied: an input that is itself
 * a result has them all, and the result's own values hold. */
static const char *const own_attrs[] = {
    "fftshard_version", "transform", "direction", "norm", "input", "transpose", "precision",
    "axes", "real_axis", "axis_kinds", "input_shape", "last_size", "ranks", "offset", "shards",
    "padded_shape", "window", "window_form", "window_power", "mode", "boundary",
    "operation", "box_size", "k_convention", "second_input", "input_slice",
    /* the coordinates' bookkeeping (HDF5's dimension scales, netCDF-4's):
     * the result has its own */
    "DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME", "_Netcdf4Dimid", "_Netcdf4Coordinates",
    NULL,
};

int fs_output_own_attr(const char *name)
{
    for (int i = 0; own_attrs[i]; i++)
        if (strcmp(own_attrs[i], name) == 0)
            return 1;
    return 0;
}

/* --attr's attributes in place of the input's of their names, alike on
 * every rank: each result and group carries them. */
static fs_status given_attrs(const fs_output_options *o, fs_input_attrs *a)
{
    fs_status st = FS_OK;
    for (int k = 0; k < o->nattrs && st == FS_OK; k++) {
        char name[256];
        const char *eq = strchr(o->attrs[k], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - o->attrs[k]), o->attrs[k]);
        st = fs_input_attrs_put(a, name, eq + 1);
    }
    return st;
}

/* Collective: rank 0 reads each input dataset's own attributes, every
 * rank gets them, with --attr's in place of theirs. */
static fs_status take_input_attrs(fs_output *out)
{
    const fs_output_inputs *in = &out->in;
    int n = in->n;
    out->input_attrs = calloc((size_t)(n > 0 ? n : 1), sizeof *out->input_attrs);
    out->input_coords = calloc((size_t)(n > 0 ? n : 1), sizeof *out->input_coords);
    fs_status st = out->input_attrs && out->input_coords
                       ? FS_OK
                       : fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if ((st = fs_error_agree(out->comm, st)) != FS_OK)
        return st;
    out->n_input_attrs = n;
    int sharded = in->shards && in->shards->n;
    for (int i = 0; i < n && st == FS_OK; i++) {
        if (in->infos[i].painted) /* a mesh made of particles: no dataset of its own */
            continue;
        if (out->rank == 0)
            st = fs_h5_attrs_read(sharded ? in->shards->files[0] : in->inputs[i].file,
                                  in->infos[i].dataset, own_attrs, in->verbose, in->quiet,
                                  &out->input_attrs[i]);
        st = fs_error_agree(out->comm, st);
        if (st == FS_OK)
            st = fs_h5_attrs_bcast(out->comm, 0, &out->input_attrs[i]); /* agreed */
        if (st == FS_OK)
            st = fs_error_agree(out->comm, given_attrs(out->opts, &out->input_attrs[i]));
        /* The batch axes' coordinates: the whole array's, which no shard has. */
        if (st == FS_OK && !out->opts->shard_output && in->coords)
            st = fs_input_coords_take(out->comm, in->inputs[i].file, &in->infos[i], in->ts[i],
                                      sharded, &out->input_coords[i]);
    }
    return st;
}

void fs_output_init(fs_output *out)
{
    memset(out, 0, sizeof *out);
    out->so.comm = MPI_COMM_NULL;
    out->so.file = -1;
}

fs_h5_output *fs_output_h5(const fs_output *out)
{
    return out->h5;
}

const fs_input_attrs *fs_output_input_attrs(const fs_output *out)
{
    return out->input_attrs;
}

const fs_input_coords *fs_output_input_coords(const fs_output *out)
{
    return out->input_coords;
}

void fs_output_select(fs_output *out, const fs_output_result *r)
{
    out->result = *r;
}

fs_status fs_output_begin(MPI_Comm comm, const fs_output_options *o, const fs_output_inputs *in,
                          const fs_output_layout *layout, fs_output *out)
{
    fs_output_init(out);
    out->comm = comm;
    out->opts = o;
    out->in = *in;
    out->layout = *layout;
    int n = in->n;
    if (MPI_Comm_rank(comm, &out->rank) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    const char *inputs[n > 0 ? n : 1];
    for (int i = 0; i < n; i++)
        inputs[i] = in->inputs[i].file;
    fs_run_files files = {
        .output = o->file,
        .report = o->report_file,
        .wisdom = o->wisdom_file,
        .ninputs = n,
        .inputs = inputs,
        .infos = in->infos,
        .shards = in->shards,
        .replaced_set = o->force && o->shard_output && layout->nresults ? layout->results[0]
                                                                         : NULL,
    };
    fs_status st = fs_destinations_check(comm, &files);
    if (st == FS_OK)
        st = fs_root_decides(comm, check_paths_on_root, out);
    /* --add replaces OUTPUT by a copy with more in it: no --force needed. */
    const char *input = n > 0 ? in->inputs[0].file : NULL;
    if (st == FS_OK)
        st = fs_atomic_begin(comm, o->file, input, o->force || o->add, &out->tmp_path);
    /* A report is a log: it replaces an earlier one without --force. Its
     * temporary exists from now on, so an unwritable report path fails the
     * run before any work. */
    if (st == FS_OK && o->report_file && !fs_report_to_stdout(o->report_file))
        st = fs_atomic_begin(comm, o->report_file, input, 1, &out->report_tmp);
    if (st == FS_OK && o->shard_output)
        st = fs_shard_output_begin(comm, o->file, &out->so);
    if (st == FS_OK)
        st = take_input_attrs(out);
    return st;
}

fs_status fs_output_plan(fs_output *out, const fs_transform *const *input_ts)
{
    const fs_output_options *o = out->opts;
    int n = out->layout.nresults;
    const fs_transform *ts[n + 1]; /* each result's transform (none: the first INPUT's) */
    ts[0] = input_ts[0];
    for (int p = 0; p < n; p++)
        ts[p] = input_ts[out->layout.result_input[p]];
    /* Every rank decides alike: rank 0 speaks. Each result's storage is
     * chosen again when it is created; all are judged now. */
    fs_status st = FS_OK;
    for (int i = n - 1; i >= 0 && st == FS_OK; i--)
        st = fs_output_storage(o, ts[i], &out->storage);
    for (int i = 0; i < n && st == FS_OK && !o->shard_output; i++)
        st = fs_coords_check(out->layout.nbox, ts[i]);
    if (st == FS_OK && o->shard_output)
        st = fs_shard_output_plan(out->comm, ts[0], o->shard_output, o->file, &out->so);
    if (st == FS_OK && out->rank == 0)
        st = fs_output_space_check(out, ts, n);
    return fs_error_agree(out->comm,
                          out->rank == 0 || fs_error_status() == FS_ERR_RUNTIME ? st : FS_OK);
}

/* Rank 0, --add: OUTPUT's contents into its temporary (nothing to copy when
 * there was no OUTPUT), and what OUTPUT was when copied, which the commit
 * finds again or refuses (out->copied). The copy is what is written: its
 * result paths are checked again (OUTPUT may have changed since
 * fs_output_begin looked). */
static fs_status copy_output(void *arg)
{
    fs_output *out = arg;
    fs_signals_pause_point("add-copy");
    fs_status st = fs_atomic_copy_into(out->opts->file, out->tmp_path, &out->copied);
    if (st != FS_OK || !out->copied.exists)
        return st;
    return check_add_paths(out, out->tmp_path);
}

fs_status fs_output_open(fs_output *out)
{
    const fs_output_options *o = out->opts;
    if (o->shard_output)
        return FS_OK; /* the files are made with their datasets */
    int existing = 0;
    if (o->add) {
        /* Agreed quietly: the caller agrees (and prints) at the stage's end. */
        fs_status st_copy = fs_root_decides_quietly(out->comm, copy_output, out);
        if (st_copy != FS_OK)
            return st_copy;
        existing = out->copied.exists; /* rank 0's, sent to all */
        fs_status st_bcast = fs_bcast_bytes(out->comm, 0, &existing, sizeof existing);
        if (st_bcast != FS_OK)
            return st_bcast;
    }
    fs_status st = fs_h5_output_open(out->comm, out->tmp_path, existing, &out->h5);
    if (out->h5)
        fs_h5_output_set_name(out->h5, o->file);
    return st;
}

fs_status fs_output_create(fs_output *out, const fs_transform *t)
{
    fs_status st = FS_OK;
    const char *dataset = out->result.dataset;
    if (!out->opts->shard_output) {
        st = fs_output_storage(out->opts, t, &out->storage);
        /* --add --force: the replaced dataset's coordinates stay for others */
        if (st == FS_OK && out->opts->add && out->opts->force)
            st = fs_h5_scales_detach(out->h5, dataset);
        if (st == FS_OK)
            st = fs_h5_output_add(out->h5, dataset, t->out_ndim, t->out_shape, t->out_type,
                                  &out->storage, out->opts->add && out->opts->force);
        return st;
    }
    if (out->so.file >= 0) /* else this rank owns nothing of the output */
        st = fs_h5_output_new(out->so.comm, out->so.path, dataset, t->out_ndim,
                              out->so.box.count, t->out_type, &out->storage, &out->h5);
    if (out->h5)
        fs_h5_output_set_name(out->h5, out->opts->file);
    return st;
}

/* A stage's result: what made it, in which units of k; a combined result
 * (no box): the operation and the second INPUT. */
static fs_status round_trip_attributes(const fs_output *out, fs_h5_output *h5)
{
    const fs_output_result *a = &out->result;
    int64_t n = a->nbox;
    fs_status st = fs_h5_output_attr_string(h5, "operation", a->operation ? a->operation : "");
    if (st == FS_OK && a->second >= 0) {
        char second[FS_INPUT_NAME_MAX];
        snprintf(second, sizeof second, "%s:%s%s", out->in.inputs[a->second].file,
                 out->in.infos[a->second].dataset, out->in.infos[a->second].slice.text);
        st = fs_h5_output_attr_string(h5, "second_input", second);
    }
    if (st == FS_OK && a->components)
        st = fs_h5_output_attr_string(h5, "components", a->components);
    if (st == FS_OK && a->crop)
        st = fs_h5_output_attr_string(h5, "mode", a->crop);
    if (st == FS_OK && a->weights)
        st = fs_h5_output_attr_string(h5, "weights", a->weights);
    if (st != FS_OK || !n)
        return st;
    if (st == FS_OK)
        st = fs_h5_output_attr_numbers(h5, "box_size", 1, &n, FS_DTYPE_FLOAT64, a->box);
    if (st == FS_OK)
        st = fs_h5_output_attr_string(h5, "k_convention", "k_a = 2 pi fftfreq(n_a, 1/n_a) / L_a "
                                      "over the transformed axes, L_a = box_size");
    return st;
}

/* --boundary's record (the kinds of an --apply run are its): the boundary
 * of each transformed axis in the order of "axes". */
static fs_status boundary_attribute(const fs_transform *t, fs_h5_output *h5)
{
    char text[FS_LAYOUT_MAX_DIMS * 16];
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < t->naxes && used < sizeof text; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%s", i ? "," : "",
                                 t->free_space ? "free"
                                               : fs_boundary_name_of_kind(t->r2r[t->axes[i]]));
    return fs_h5_output_attr_string(h5, "boundary", text);
}

/* --window's record: the windows, their form and (forward) mean(w^2). */
static fs_status window_attributes(const fs_transform *t, int inverse, fs_h5_output *h5)
{
    char text[FS_LAYOUT_MAX_DIMS * 64];
    fs_domain_window_text(t, text, sizeof text);
    if (!text[0])
        return FS_OK;
    double power = fs_domain_window_power(t);
    fs_status st = fs_h5_output_attr_string(h5, "window", text);
    if (st == FS_OK)
        st = fs_h5_output_attr_string(h5, "window_form", t->window_sym ? "symmetric" : "periodic");
    if (st == FS_OK && !inverse)
        st = fs_h5_output_attr_numbers(h5, "window_power", 0, NULL, FS_DTYPE_FLOAT64, &power);
    return st;
}

/* The attributes of an output dataset (collective over its file's ranks):
 * fftshard's own (own_attrs), then the input dataset's. */
static fs_status write_attributes(const fs_output *out, const fs_transform *t, fs_h5_output *h5)
{
    const fs_output_result *a = &out->result;
    const fs_input_info *info = &out->in.infos[a->input];
    char input[2 * FS_PATH_MAX + 2];
    /* a painted mesh: the positions it was painted from */
    snprintf(input, sizeof input, "%s:%s", out->in.inputs[a->input].file,
             info->painted ? info->painted_from : info->dataset);
    int64_t axes[FS_LAYOUT_MAX_DIMS], ranks = a->nranks, last_size = 0, real_axis = t->real_axis;
    /* In the order asked, as numpy's axes argument: for --real the halved
     * axis is the last. */
    for (int i = 0; i < t->naxes; i++)
        axes[i] = t->axes[i];
    /* The real length along the halved axis (the last transformed one for
     * c2c), which an inverse --real run needs. */
    if (t->real_axis >= 0)
        last_size = t->real_len;
    else if (t->naxes)
        last_size = t->in_shape[t->axes[t->naxes - 1]];
    struct { const char *name, *value; } strings[] = {
        {"fftshard_version", PACKAGE_VERSION},
        {"transform", fs_kind_name(t->kind)},
        {"direction", t->round_trip ? "round trip" : a->inverse ? "inverse" : "forward"},
        {"norm", fs_norm_name(t->norm)},
        {"input", input},
        {"transpose", a->strategy},
        {"precision", fs_precision_name(t->prec)},
    };
    fs_status st = FS_OK;
    for (size_t i = 0; i < sizeof strings / sizeof strings[0] && st == FS_OK; i++)
        st = fs_h5_output_attr_string(h5, strings[i].name, strings[i].value);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "axes", t->naxes, axes);
    if (st == FS_OK && t->real_axis >= 0)
        st = fs_h5_output_attr_int64s(h5, "real_axis", -1, &real_axis);
    char kinds[FS_LAYOUT_MAX_DIMS * 8];
    fs_transform_kinds_text(t, kinds, sizeof kinds);
    if (st == FS_OK && kinds[0])
        st = fs_h5_output_attr_string(h5, "axis_kinds", kinds);
    if (st == FS_OK && (kinds[0] || t->free_space) && t->round_trip)
        st = boundary_attribute(t, h5);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "input_shape", t->in_ndim, t->data_shape);
    if (st == FS_OK && t->resized)
        st = fs_h5_output_attr_int64s(h5, "padded_shape", t->in_ndim, t->in_shape);
    if (st == FS_OK)
        st = window_attributes(t, a->inverse, h5);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "last_size", -1, &last_size);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "ranks", -1, &ranks);
    if (st == FS_OK && info->slice.given)
        st = fs_h5_output_attr_string(h5, "input_slice", info->slice.text);
    if (st == FS_OK && t->round_trip)
        st = round_trip_attributes(out, h5);
    if (st == FS_OK && a->input < out->n_input_attrs)
        st = fs_h5_output_copy_attrs(h5, &out->input_attrs[a->input]);
    return st;
}

fs_status fs_output_write(fs_output *out, const fs_transform *t, const fs_box *box,
                          void *data, fs_progress *progress)
{
    fs_io_map m = fs_transform_write_map(t, box);
    fs_progress_begin(progress, "write",
                      (double)fs_box_elems(&m.file_box) * (double)fs_dtype_bytes(t->work_type), "B");
    fs_status st = FS_OK;
    if (out->opts->shard_output) {
        /* The file holds the group's box: positions relative to its start. */
        for (int k = 0; k < m.file_box.ndim && !t->fold; k++)
            m.file_box.start[k] -= out->so.box.start[k];
    }
    if (out->h5)
        st = fs_h5_output_write(out->h5, &m, data, out->result.keep, fs_progress_callback,
                                progress);
    if (st == FS_OK)
        st = fs_output_write_attributes(out, t);
    fs_progress_end(progress);
    return st;
}

fs_status fs_output_write_attributes(fs_output *out, const fs_transform *t)
{
    if (!out->h5)
        return FS_OK;
    fs_status st = write_attributes(out, t, out->h5);
    if (st == FS_OK && out->opts->shard_output)
        st = fs_h5_output_attr_int64s(out->h5, "offset", t->out_ndim, out->so.box.start);
    /* The shard files and their virtual master carry none (fftshard(1));
     * the coordinates keep out of the way of the results still to come. */
    const char *taken[out->layout.nresults + out->layout.ngroups + 1];
    int results = 0, ntaken = result_paths(out, taken, &results);
    int in = out->result.input;
    if (st == FS_OK && !out->opts->shard_output)
        st = fs_coords_write(out->h5, out->result.dataset, t, out->layout.nbox, out->layout.box,
                             in < out->n_input_attrs ? &out->input_coords[in] : NULL, taken,
                             ntaken);
    return st;
}

fs_status fs_output_close(fs_output *out)
{
    return fs_h5_output_close(&out->h5);
}

typedef struct commit_args {
    fs_output *out;
    const fs_transform *t;
} commit_args;

/* Rank 0, sharded output: the master, then everything into place. */
static fs_status commit_shards(fs_output *out, const fs_transform *t)
{
    fs_h5_output *master = NULL;
    fs_status st = fs_h5_output_new_virtual(out->tmp_path, out->result.dataset, t->out_ndim,
                                            t->out_shape,
                                            t->out_type, &out->so.sources, &master);
    if (st == FS_OK)
        st = write_attributes(out, t, master);
    if (st == FS_OK) {
        int64_t n = out->so.nfiles;
        st = fs_h5_output_attr_int64s(master, "shards", -1, &n);
    }
    fs_status closed = fs_h5_output_close(&master);
    st = st != FS_OK ? st : closed;
    if (st != FS_OK)
        return st;
    return fs_shard_output_commit(&out->so, out->tmp_path, out->opts->file, out->result.dataset,
                                  out->opts->force);
}

/* A failure after the result is in place says so. */
static fs_status after_the_result(fs_status st)
{
    if (st == FS_OK)
        return st;
    char message[1024];
    snprintf(message, sizeof message, "%s", fs_error_message());
    fs_error_clear();
    return fs_error_set(st, "%s (the result was written)", message);
}

/* Rank 0, once the result is in place: the report and the wisdom, already
 * written, each renamed over its file (a rename beside its own temporary:
 * nothing left to fail but the directory itself). */
static fs_status commit_side_files(fs_output *out)
{
    char **tmp[] = {&out->report_tmp, &out->wisdom_tmp};
    const char *final[] = {out->opts->report_file, out->opts->wisdom_file};
    fs_status st = FS_OK;
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) {
        if (!*tmp[i])
            continue;
        if (st != FS_OK)
            fs_atomic_abort(*tmp[i]);
        else
            st = after_the_result(fs_atomic_commit(*tmp[i], final[i]));
        free(*tmp[i]);
        *tmp[i] = NULL;
    }
    return st;
}

/* Rank 0 (fs_atomic_commit_collective): the result into place, then the
 * report and the wisdom. The result goes first: a commit it cannot make
 * leaves all three as they were. */
static fs_status commit_on_root(void *arg)
{
    commit_args *c = arg;
    const fs_output_options *o = c->out->opts;
    /* --add: OUTPUT as it was copied (or still absent), else nothing. */
    fs_status st = o->shard_output
                       ? commit_shards(c->out, c->t)
                       : fs_atomic_place_checked(c->out->tmp_path, o->file, o->force,
                                                 o->add ? &c->out->copied : NULL);
    if (st == FS_OK)
        return commit_side_files(c->out);
    return st;
}

fs_status fs_output_commit(fs_output *out, const fs_transform *t)
{
    commit_args c = {out, t};
    fs_status st = fs_atomic_commit_collective(out->comm, commit_on_root, &c);
    /* --report=-: standard output has no temporary to rename, so the report
     * goes there once the result is in place (not while the signals are
     * held: a reader that stops reading would hold them for ever). */
    if (st == FS_OK && fs_report_to_stdout(out->opts->report_file))
        st = fs_error_agree(out->comm,
                            out->rank == 0 ? after_the_result(fs_report_flush_stdout()) : FS_OK);
    return st;
}

void fs_output_abandon(fs_output *out, fs_status st)
{
    /* The ranks' HDF5 states now differ, and closing the file would wait
     * forever in a collective call that some rank has left; nothing here
     * is collective, so a rank may come here alone. Every rank registered
     * every temporary (the shard directory with the files in it), so any
     * one rank removes them all. The status was agreed and printed: rank 0
     * ends the job; the others wait for that, but not for ever. */
    if (out->rank == 0)
        fs_h5_abandon(st, 0);
    fs_atomic_remove_registered();
    sleep(10);
    fs_h5_abandon(st, 0);
}

void fs_output_finish(fs_output *out, fs_status st)
{
    fs_h5_output_close(&out->h5);
    if (st != FS_OK && out->tmp_path)
        fs_atomic_abort(out->tmp_path);
    if (st != FS_OK && out->opts && out->opts->shard_output && out->so.dir_tmp)
        fs_shard_output_abort(out->comm, &out->so);
    fs_shard_output_free(&out->so);
    /* Once committed these are NULL on rank 0, which renamed them; the
     * other ranks forget the names they registered. */
    char *side[] = {out->report_tmp, out->wisdom_tmp};
    for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
        if (side[i] && st == FS_OK)
            fs_atomic_forget(side[i]);
        else if (side[i])
            fs_atomic_abort(side[i]);
    }
    fs_report_discard_stdout(); /* kept by a run that failed after the report */
    free(out->tmp_path);
    free(out->report_tmp);
    free(out->wisdom_tmp);
    out->tmp_path = out->report_tmp = out->wisdom_tmp = NULL;
    for (int i = 0; i < out->n_input_attrs; i++) {
        fs_input_attrs_free(&out->input_attrs[i]);
        fs_input_coords_free(&out->input_coords[i]);
    }
    free(out->input_attrs);
    free(out->input_coords);
    out->input_attrs = NULL;
    out->input_coords = NULL;
    out->n_input_attrs = 0;
}
