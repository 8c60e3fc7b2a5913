/* exchange: the strategy table and the calls every strategy shares. */
#include "config.h"

#include "exchange.h"

#include <stdlib.h>
#include <string.h>

const fs_exchange_ops *const fs_exchange_strategies[] = {
    &fs_exchange_alltoall,
    NULL,
};

const fs_exchange_ops *fs_exchange_find(const char *name)
{
    for (int i = 0; fs_exchange_strategies[i]; i++)
        if (strcmp(fs_exchange_strategies[i]->name, name) == 0)
            return fs_exchange_strategies[i];
    return NULL;
}

fs_status fs_exchange_new(const fs_exchange_ops *ops, const fs_exchange_args *args,
                          fs_exchange **out)
{
    *out = NULL;
    fs_exchange *x = calloc(1, sizeof *x);
    if (!x)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the %s exchange", ops->name);
    x->ops = ops;
    x->args = *args;
    fs_status ret = ops->plan(x);
    if (ret != FS_OK) {
        fs_exchange_free(&x);
        return ret;
    }
    *out = x;
    return FS_OK;
}

fs_status fs_exchange_execute(fs_exchange *x, void *data)
{
    return x->ops->execute(x, data);
}

void fs_exchange_free(fs_exchange **x)
{
    if (!*x)
        return;
    if ((*x)->ops->destroy)
        (*x)->ops->destroy(*x);
    free(*x);
    *x = NULL;
}
