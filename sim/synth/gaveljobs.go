package synth

// gavelTemplate is the part of a Gavel trace line that depends on the job
// type only: its command, working directory, the flag that takes the step
// count, and whether the command needs a data directory (Gavel's JobTable,
// scheduler/job_table.py; MIT, see testdata/traces/gavel/NOTICE; read off
// the traces that Gavel's own generator wrote, testdata/traces/gavel-gen).
type gavelTemplate struct {
	command, workDir, stepsArg string
	needsData                  bool
}

// gavelTemplates holds Gavel's 26 job types by name.
var gavelTemplates = map[string]gavelTemplate{
	"A3C":                              {"python3 main.py --env PongDeterministic-v4 --workers 4 --amsgrad True", "rl", "--max-steps", false},
	"CycleGAN":                         {"python3 cyclegan.py --dataset_path %s/monet2photo --decay_epoch 0", "cyclegan", "--n_steps", true},
	"LM (batch size 10)":               {"python main.py --cuda --data %s/wikitext2 --batch_size 10", "language_modeling", "--steps", true},
	"LM (batch size 20)":               {"python main.py --cuda --data %s/wikitext2 --batch_size 20", "language_modeling", "--steps", true},
	"LM (batch size 40)":               {"python main.py --cuda --data %s/wikitext2 --batch_size 40", "language_modeling", "--steps", true},
	"LM (batch size 5)":                {"python main.py --cuda --data %s/wikitext2 --batch_size 5", "language_modeling", "--steps", true},
	"LM (batch size 80)":               {"python main.py --cuda --data %s/wikitext2 --batch_size 80", "language_modeling", "--steps", true},
	"Recommendation (batch size 1024)": {"python3 train.py --data_dir %s/ml-20m/pro_sg/ --batch_size 1024", "recommendation", "-n", true},
	"Recommendation (batch size 2048)": {"python3 train.py --data_dir %s/ml-20m/pro_sg/ --batch_size 2048", "recommendation", "-n", true},
	"Recommendation (batch size 4096)": {"python3 train.py --data_dir %s/ml-20m/pro_sg/ --batch_size 4096", "recommendation", "-n", true},
	"Recommendation (batch size 512)":  {"python3 train.py --data_dir %s/ml-20m/pro_sg/ --batch_size 512", "recommendation", "-n", true},
	"Recommendation (batch size 8192)": {"python3 train.py --data_dir %s/ml-20m/pro_sg/ --batch_size 8192", "recommendation", "-n", true},
	"ResNet-18 (batch size 128)":       {"python3 main.py --data_dir=%s/cifar10 --batch_size 128", "image_classification/cifar10", "--num_steps", true},
	"ResNet-18 (batch size 16)":        {"python3 main.py --data_dir=%s/cifar10 --batch_size 16", "image_classification/cifar10", "--num_steps", true},
	"ResNet-18 (batch size 256)":       {"python3 main.py --data_dir=%s/cifar10 --batch_size 256", "image_classification/cifar10", "--num_steps", true},
	"ResNet-18 (batch size 32)":        {"python3 main.py --data_dir=%s/cifar10 --batch_size 32", "image_classification/cifar10", "--num_steps", true},
	"ResNet-18 (batch size 64)":        {"python3 main.py --data_dir=%s/cifar10 --batch_size 64", "image_classification/cifar10", "--num_steps", true},
	"ResNet-50 (batch size 128)":       {"python3 main.py -j 8 -a resnet50 -b 128 %s/imagenet/", "image_classification/imagenet", "--num_minibatches", true},
	"ResNet-50 (batch size 16)":        {"python3 main.py -j 8 -a resnet50 -b 16 %s/imagenet/", "image_classification/imagenet", "--num_minibatches", true},
	"ResNet-50 (batch size 32)":        {"python3 main.py -j 8 -a resnet50 -b 32 %s/imagenet/", "image_classification/imagenet", "--num_minibatches", true},
	"ResNet-50 (batch size 64)":        {"python3 main.py -j 8 -a resnet50 -b 64 %s/imagenet/", "image_classification/imagenet", "--num_minibatches", true},
	"Transformer (batch size 128)":     {"python3 train.py -data %s/translation/multi30k.atok.low.pt -batch_size 128 -proj_share_weight", "translation", "-step", true},
	"Transformer (batch size 16)":      {"python3 train.py -data %s/translation/multi30k.atok.low.pt -batch_size 16 -proj_share_weight", "translation", "-step", true},
	"Transformer (batch size 256)":     {"python3 train.py -data %s/translation/multi30k.atok.low.pt -batch_size 256 -proj_share_weight", "translation", "-step", true},
	"Transformer (batch size 32)":      {"python3 train.py -data %s/translation/multi30k.atok.low.pt -batch_size 32 -proj_share_weight", "translation", "-step", true},
	"Transformer (batch size 64)":      {"python3 train.py -data %s/translation/multi30k.atok.low.pt -batch_size 64 -proj_share_weight", "translation", "-step", true},
}
