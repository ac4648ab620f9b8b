#!/usr/bin/python3
"""Writes the model zoo of docs/ONNX.md: five CNNs for 32x32 RGB inputs exported from
PyTorch definitions to ONNX, each with a reference file computed by PyTorch on the
same weights, so that tunescope's tests check its forward pass, loss and gradients
without needing torch.

  <name>.onnx            the model, exported for training (batch-norm layers kept)
  <name>.reference.onnx  no graph nodes, only tensors (ONNX initializers):
                         input [4,3,32,32], labels [4] (int64), logits [4,10], loss [1],
                         grad:<initializer name> for every trained parameter

What each reference holds (REFERENCES) keeps the repository small: resnet56 is
resnet20's blocks nine times over, so its gradients (3.4 MB) add no check resnet20's do
not make.

The reference step is a training-mode forward pass (batch statistics), mean softmax
cross-entropy, and the backward pass; dropout is left out of it (tunescope trains
Dropout as the identity).

Needs Debian's python3-torch and python3-onnx (scripts/install-deps.sh).
usage: /usr/bin/python3 models/zoo/make-zoo.py [OUT_DIR]   (default: this script's folder)
"""
import copy
import os
import sys

import onnx
import onnx.helper
import onnx.numpy_helper
import torch
import torch.nn as nn

BATCH = 4
CLASSES = 10


class BasicBlock(nn.Module):
    """conv3x3-bn-relu-conv3x3-bn plus identity or 1x1 conv + bn projection, then relu."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + self.shortcut(x))


class CifarResNet(nn.Module):
    """He et al.'s CIFAR ResNet-(6n+2): 16/32/64 channels, projection shortcuts."""

    def __init__(self, n):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()
        layers, cin = [], 16
        for stage, cout in enumerate([16, 32, 64]):
            blocks = []
            for b in range(n):
                blocks.append(BasicBlock(cin, cout, 2 if stage > 0 and b == 0 else 1))
                cin = cout
            layers.append(nn.Sequential(*blocks))
        self.layer1, self.layer2, self.layer3 = layers
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, CLASSES)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


def vgg11_32(width_divisor=4):
    """VGG-11 (configuration A) with batch norm for 32x32 inputs: five 2x2 max pools take
    32x32 to 1x1, then a 3-layer classifier. Channels are VGG's divided by 4 (16..128)
    so the file and its reference stay small enough for the repository."""
    cfg = [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]
    layers, cin = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            cout = v // width_divisor
            layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU()]
            cin = cout
    hidden = 512 // width_divisor
    return nn.Sequential(*layers, nn.Flatten(),
                         nn.Linear(cin, hidden), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(hidden, CLASSES))


def mobilenet_32():
    """A MobileNet-v1-style net: a 3x3 stem, then depthwise 3x3 + pointwise 1x1 blocks."""
    def block(cin, cout, stride):
        return [nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin), nn.ReLU(),
                nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
    layers = [nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU()]
    for cin, cout, stride in [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1)]:
        layers += block(cin, cout, stride)
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, CLASSES))


class OpsNet(nn.Module):
    """The operators the other models do not use, in one small net: grouped convolution,
    LeakyReLU, Sigmoid, Tanh, Mul by a constant and Concat on the channels."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, 1, 1)
        self.bn = nn.BatchNorm2d(16)
        self.act = nn.LeakyReLU(0.1)
        self.grouped = nn.Conv2d(16, 32, 3, 2, 1, groups=4, bias=False)
        self.branch_a = nn.Conv2d(32, 16, 1)
        self.branch_b = nn.Conv2d(32, 16, 3, 1, 1, groups=2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, CLASSES)

    def forward(self, x):
        x = self.grouped(self.act(self.bn(self.stem(x))))
        a = torch.sigmoid(self.branch_a(x))
        b = torch.tanh(self.branch_b(x)) * 0.5
        return self.fc(torch.flatten(self.pool(torch.cat([a, b], dim=1)), 1))


# What each model's reference file holds: "gradients" (and the forward pass), "forward", or nothing.
REFERENCES = {"resnet20": "gradients", "resnet56": "forward", "vgg11": "gradients",
              "mobilenet": "gradients", "opsnet": "gradients"}
MODELS = {
    "resnet20": lambda: CifarResNet(3),
    "resnet56": lambda: CifarResNet(9),
    "vgg11": vgg11_32,
    "mobilenet": mobilenet_32,
    "opsnet": OpsNet,
}


def randomise_batch_norms(model, gen):
    # Not the all-ones / all-zeros defaults, so that loading gamma and beta is tested.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.weight.copy_(0.5 + torch.rand(m.weight.shape, generator=gen))
                m.bias.copy_(0.2 * torch.randn(m.bias.shape, generator=gen))
                m.running_mean.copy_(0.1 * torch.randn(m.running_mean.shape, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape, generator=gen))


def export(model, path):
    model = copy.deepcopy(model).train()
    torch.onnx.export(model, torch.zeros(BATCH, 3, 32, 32), path, opset_version=13,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})


def reference(model, gen, gradients):
    model = copy.deepcopy(model).train()
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.eval()
    x = torch.randn(BATCH, 3, 32, 32, generator=gen)
    labels = torch.randint(0, CLASSES, (BATCH,), generator=gen)
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    tensors = {"input": x, "labels": labels, "logits": logits.detach(), "loss": loss.detach().reshape(1)}
    if gradients:
        for name, p in model.named_parameters():
            tensors["grad:" + name] = p.grad
    initializers = [onnx.numpy_helper.from_array(t.numpy(), name) for name, t in tensors.items()]
    graph = onnx.helper.make_graph([], "reference", [], [], initializer=initializers)
    return onnx.helper.make_model(graph)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out_dir, exist_ok=True)
    for index, (name, make) in enumerate(MODELS.items()):
        torch.manual_seed(index)
        gen = torch.Generator().manual_seed(1000 + index)
        model = make()
        randomise_batch_norms(model, gen)
        path = os.path.join(out_dir, name + ".onnx")
        export(model, path)
        onnx.checker.check_model(onnx.load(path))
        if REFERENCES[name]:
            onnx.save(reference(model, gen, REFERENCES[name] == "gradients"),
                      os.path.join(out_dir, name + ".reference.onnx"))
        params = sum(p.numel() for p in model.parameters())
        print(f"make-zoo: {path}: {params} parameters, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
