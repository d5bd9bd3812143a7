# functions/add.py
from ember.autograd import Function
from _ext import my_lib


class MyAddFunction(Function):
    def forward(self, input1, input2):
        output = input1.new()
        if not my_lib.my_lib_add_forward(input1, input2, output):
            raise ValueError("input sizes must match")
        return output

    def backward(self, grad_output):
        grad_input = grad_output.new()
        my_lib.my_lib_add_backward(grad_output, grad_input)
        # The original returned grad_input alone; a Function's backward returns one gradient
        # per input (PyTorch has required that since 0.2). The C code fills d(output)/d(input)
        # = 1, so each input's gradient is that times grad_output.
        grad_input = grad_input * grad_output
        return grad_input, grad_input
