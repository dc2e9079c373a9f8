"""``backends.shaped`` compiled: a one-dimensional C-contiguous array viewed with a shape, the view's fields written
in place (numba's reshape calls out to a general routine that checks whether any strides allow the view: ~18 ns a
view, some thirty views a contact step). Imported by ``backends.compiled`` only: it imports numba.
"""
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array


@intrinsic
def shaped(typingctx, vector, shape):
    """vector (one-dimensional, C-contiguous; its length the product of ``shape``, not checked) viewed with
    ``shape``, a tuple of integers, in C order: the same data, the same owner."""
    if not (isinstance(vector, types.Array) and vector.ndim == 1 and vector.layout == 'C'
            and isinstance(shape, types.BaseTuple) and all(isinstance(n, types.Integer) for n in shape)):
        return None
    view_type = types.Array(vector.dtype, len(shape), 'C')

    def codegen(context, builder, signature, arguments):
        source = make_array(vector)(context, builder, arguments[0])
        dimensions = [context.cast(builder, n, kind, types.intp)
                      for n, kind in zip(cgutils.unpack_tuple(builder, arguments[1]), shape)]
        strides, stride = [], source.itemsize
        for n in reversed(dimensions):   # C order: the last index is contiguous
            strides.insert(0, stride)
            stride = builder.mul(stride, n)
        view = make_array(view_type)(context, builder)
        populate_array(view, data=source.data, shape=cgutils.pack_array(builder, dimensions),
                       strides=cgutils.pack_array(builder, strides), itemsize=source.itemsize,
                       meminfo=source.meminfo, parent=source.parent)
        return impl_ret_borrowed(context, builder, view_type, view._getvalue())
    return view_type(vector, shape), codegen
