"""Run the extension through a legacy Function and a Module, forward and backward.

    python build.py && python test.py
"""
import ember as torch
import ember.nn as nn
from ember.autograd import Variable
from modules.add import MyAddModule


class MyNetwork(nn.Module):
    def __init__(self):
        super(MyNetwork, self).__init__()
        self.add = MyAddModule()

    def forward(self, input1, input2):
        return self.add(input1, input2)


model = MyNetwork()
input1, input2 = Variable(torch.rand(5, 5), requires_grad=True), Variable(torch.rand(5, 5))
print(model(input1, input2))
print(input1 + input2)
assert torch.equal(model(input1, input2), input1 + input2)

output = model(input1, input2)
output.backward(torch.ones(input1.size()))
print(input1.grad)
assert torch.equal(input1.grad, torch.ones(5, 5))
print("ok")
