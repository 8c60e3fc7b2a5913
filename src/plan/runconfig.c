/* SPDX-License-Identifier: GPL-3.0-or-later */
/* runconfig: see runconfig.h. */
#include "config.h"

#include "plan/runconfig.h"

const char *fs_strategy_request_name(const fs_strategy_request *r)
{
    switch (r->kind) {
    case FS_STRATEGY_AUTO: return "auto";
    case FS_STRATEGY_NAMED: return r->ops->name;
    case FS_STRATEGY_DEFAULT: break;
    }
    return "default";
}

fs_status fs_run_config_axes(const fs_run_config *c, int ndim, int axes_out[FS_MAX_DIMS])
{
    for (int k = 0; k < FS_MAX_DIMS; k++)
        axes_out[k] = c->naxes == 0 && k < ndim;
    if (c->naxes == 0)
        return FS_OK;
    for (int i = 0; i < c->naxes; i++) {
        int axis = c->axes[i];
        int resolved = axis < 0 ? axis + ndim : axis;
        if (resolved < 0 || resolved >= ndim)
            return fs_error_set(FS_ERR_USAGE, "--axes: axis %d is out of range for a %d-D dataset",
                                axis, ndim);
        if (axes_out[resolved])
            return fs_error_set(FS_ERR_USAGE,
                                "--axes: axes %d and %d are the same axis of a %d-D dataset",
                                c->axes[i], resolved, ndim);
        axes_out[resolved] = 1;
    }
    return FS_OK;
}
