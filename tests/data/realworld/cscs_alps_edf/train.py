import torch

model = torch.compile(torch.nn.Linear(2, 2))
