"""jax.lax.associative_scan with reverse=True refuses a negative axis (plain JAX)."""

import jax
import jax.numpy as jnp

print("jax", jax.__version__)
x = jnp.arange(6.0).reshape(2, 3)
print("axis=-1:", jax.lax.associative_scan(jnp.add, x, axis=-1).tolist())
print("axis=1, reverse:", jax.lax.associative_scan(jnp.add, x, axis=1, reverse=True).tolist())
try:
    print("axis=-1, reverse:", jax.lax.associative_scan(jnp.add, x, axis=-1, reverse=True).tolist())
except Exception as exc:
    print("axis=-1, reverse:", type(exc).__name__, exc)
    print("still reproduces")
else:
    print(f"fixed in {jax.__version__}")
