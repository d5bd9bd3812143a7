int my_lib_add_forward(EmberFloatTensor *input1, EmberFloatTensor *input2,
                       EmberFloatTensor *output);
int my_lib_add_backward(EmberFloatTensor *grad_output, EmberFloatTensor *grad_input);
