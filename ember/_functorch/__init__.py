"""The machinery of ``ember.func``: reverse-mode function transforms (grad, vjp, jacrev,
jvp by the double-vjp identity), ``vmap`` with batching rules over the built-in ops,
functional_call and the pytrees they walk."""
