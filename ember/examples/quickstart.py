"""ember's first demo: build a small graph, run backward, print the gradients.

Run it with ``python -m ember.examples.quickstart``; the main job is the training
demo, ``python -m ember.examples.digits``.
"""
import ember


def main():
    ember.manual_seed(0)
    w = ember.randn(3, 2, requires_grad=True)
    b = ember.zeros(2, requires_grad=True)
    x = ember.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    target = ember.tensor([[1.0, 0.0], [0.0, 1.0]])

    logits = x @ w + b
    loss = -(target * logits.log_softmax(dim=1)).sum(1).mean()
    loss.backward()

    print("loss      :", loss)
    print("dloss/dw  :", w.grad)
    print("dloss/db  :", b.grad)

    # gradients of gradients: d/dx of d/dx (x^3) = 6x
    x = ember.tensor(2.0, requires_grad=True)
    (dy,) = ember.autograd.grad(x ** 3, x, create_graph=True)
    (d2y,) = ember.autograd.grad(dy, x)
    print("d(x^3)/dx at 2 :", dy.item(), "  second derivative:", d2y.item())


if __name__ == "__main__":
    main()
