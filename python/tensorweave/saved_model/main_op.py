"""tf.saved_model.main_op: the op a SavedModel runs after restoring its
variables, as TensorFlow builds it (local variables and lookup tables
initialized).

    builder.add_meta_graph_and_variables(sess, ["serve"],
                                         main_op=tf.saved_model.main_op.main_op())
"""

from tensorweave.framework import ops
from tensorweave.framework.api_export import tf_export
from tensorweave.ops import control_flow_ops, variables
from tensorweave.saved_model import constants

__all__ = ["main_op", "main_op_with_restore"]


def _tables_initializer():
    initializers = ops.get_collection(constants.TABLE_INITIALIZERS_COLLECTION)
    if initializers:
        return control_flow_ops.group(*initializers, name="init_all_tables")
    return control_flow_ops.no_op(name="init_all_tables")


@tf_export("saved_model.main_op_with_restore")
def main_op_with_restore(restore_op_name):
    """main_op() run after the op named `restore_op_name`."""
    restore_op = ops.get_default_graph().as_graph_element(restore_op_name)
    with ops.control_dependencies([main_op()]):
        return control_flow_ops.group(restore_op)


def main_op():
    """Initializes the local variables and the lookup tables."""
    return control_flow_ops.group(variables.local_variables_initializer(), _tables_initializer())
