"""tf.train.GradientDescentOptimizer: var -= learning_rate * grad."""

from tensorweave.framework import ops
from tensorweave.train import training_ops
from tensorweave.train.optimizer import Optimizer, _call_if_callable

__all__ = [
    "GradientDescentOptimizer",
]


class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent; `learning_rate` may be a float, a Tensor (e.g. a decay
    schedule) or a callable returning either."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self):
        self._learning_rate_tensor = ops.convert_to_tensor(
            _call_if_callable(self._learning_rate), name="learning_rate"
        )

    def _apply_dense(self, grad, var):
        return training_ops.apply_gradient_descent(
            var,
            self._cast_like(self._learning_rate_tensor, var),
            grad,
            use_locking=self._use_locking,
        )
