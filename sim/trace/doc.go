// Package trace reads job traces for `gpusched sim`: Gavel, Philly,
// Tiresias, Pollux and Alibaba 2023 traces, and gpusched's native
// JSON-lines format. ReadTrace also says what a reader left out on purpose
// and whether durations are wall-clock times on unknown GPU types;
// ReadAlibabaNodes reads an Alibaba node list.
//
// Read parses a whole trace into []model.JobSpec; Detect picks the format
// from the file name and first line when --format is "auto"; Formats lists
// the format names. Every reader returns its jobs sorted by Submit, jobs
// submitted at the same time in file order, and every job has GPUs, MinGPUs
// and MaxGPUs set (all three equal unless the format says otherwise: only
// jsonl has elastic jobs). docs/TRACES.md says the same for users, with the
// numbers of the Pollux derivation below.
//
// # Formats
//
// gavel (*.trace, no header): ten tab-separated columns job_type, command,
// working_directory, num_steps_arg, needs_data_dir, total_steps,
// scale_factor, priority_weight, SLO, arrival_time. Model = job_type,
// Steps = total_steps (≥ 1), GPUs = scale_factor, Submit = arrival_time
// seconds as given. Priority is the integer part of priority_weight, kept as
// is: Gavel's weights are ≥ 1 (1 is normal, higher is more important, as
// for Priority); a positive weight below 1 becomes 0. command,
// working_directory and num_steps_arg are ignored; needs_data_dir (0 or 1)
// and SLO (a number, -1 for none) are checked and ignored. ID is the job's
// zero-based index in the file.
//
// philly (header "timestamp,duration,num_gpus,gpu_time,cluster"): timestamp
// "YYYY-MM-DD HH:MM:SS" read as UTC; Submit is the time since the earliest
// timestamp of the trace. Duration = duration seconds, GPUs = num_gpus;
// Model and User are empty; gpu_time is checked (a non-negative number) and
// ignored; cluster is free text and ignored. ID is the zero-based index in
// the file.
//
// tiresias (header "job_id,num_gpu,submit_time,iterations,model_name,
// duration,interval"): ID = job_id, GPUs = num_gpu, Submit = submit_time
// and Duration = duration (seconds as given), Model = model_name. These
// model names (vgg19, resnet50, …) are not keys of the throughput matrix;
// they are kept for the simulator to map or ignore. Steps stays 0:
// iterations (checked, a non-negative integer) cannot be turned into time
// without a matching throughput, and duration is what the trace measured;
// interval is checked (a non-negative number) and ignored.
//
// pollux (header "name,time,application,num_replicas,batch_size"): ID =
// name, Submit = time (seconds as given), Model = application (one of
// bert, cifar10, deepspeech2, imagenet, ncf, yolov3), GPUs = num_replicas.
// The workload gives no duration; Duration is computed as described below.
//
// jsonl (the native format of DESIGN.md): one JSON object per line with the
// keys id, submit_s, gpus (all three required), min_gpus, max_gpus (default
// gpus), model, steps, duration_s, gpu_type, user, priority and
// peak_mem_mib, and one replica's requests besides GPUs: cpus (cores or a
// quantity), memory (a quantity or bytes), resources ({name: amount}) or the
// older replica_cpu_milli and replica_mem_mib (JobSpec.Requests; a resource
// given twice is an error). Keys are matched exactly (case included), an unknown or
// repeated key is an error, and a job must end on its line. A job gives
// either model+steps (steps ≥ 1) or duration_s; model with duration_s is
// allowed (model is then the job type used for speed ratios), steps without
// model is an error, and so are steps together with duration_s. Requires
// 1 ≤ min_gpus ≤ gpus ≤ max_gpus, submit_s ≥ 0, peak_mem_mib ≥ 0.
//
// alibaba (header "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,
// pod_phase,creation_time,deletion_time,scheduled_time"): ID = name, Submit
// = creation_time, Duration = deletion_time − scheduled_time (− creation_time
// when scheduled_time is empty), GPUs = ReplicaGPUs = num_gpu, Requests =
// cpu_milli and memory_mib, Group = qos, GPUType = gpu_spec in lower case
// when it names one type. Tasks with gpu_milli < 1000 (a shared GPU),
// num_gpu 0, or several types in gpu_spec are left out and counted
// (Trace.Skipped, the Skip* reasons); the durations are wall-clock
// (Trace.WallClock). docs/TRACES.md has the details.
//
// # Zero durations
//
// A measured duration of zero is legal input (a job that failed at once):
// the job is kept, and a duration that is zero or rounds to zero
// milliseconds becomes 1 ms, so that every job has positive work and
// finishes as soon as it starts. This applies to philly, tiresias and
// jsonl duration_s. Step counts, on the other hand, are requested work and
// must be at least 1. So every job returned has exactly one of Steps and
// Duration positive.
//
// # Pollux durations
//
// Pollux's artifact (petuum/adaptdl, branch osdi21-artifact, simulator/)
// gives each workload job an application, a replica count and a global
// batch size, chosen by simulator/workload.py from
// Application.get_configurations in simulator/applications.py. That function
// estimates a job's completion time as
//
//	local  = ⌈batch_size / num_replicas⌉           per-GPU batch
//	accum  = ⌈local / max_local_bsz⌉ − 1           gradient-accumulation steps
//	atomic = ⌈local / (accum + 1)⌉                 per-GPU batch of one pass
//	step, sync = step_time, sync_time at atomic on the placement
//	step  += accum × (step − sync)
//	duration = iterations(batch_size) × step
//
// and Read uses exactly this as Duration. The placement packs the replicas
// onto nodes of 4 GPUs (6 → "24", 12 → "444"). Step times come from the
// embedded copies of simulator/traces/<app>/placements.csv (the packed
// placement's rows, up to 16 replicas) and scalability.csv (rows on
// ⌈replicas/4⌉ nodes: 24, 32, 48 and 64 replicas), interpolated linearly
// along the per-GPU batch size, as Pollux does; a replica count with no
// packed measurement (say 20) is interpolated linearly between the nearest
// measured counts (16 and 24), a simplification of Pollux's
// LinearNDInterpolator; more than 64 replicas is an error, as in Pollux.
// Points measured twice are averaged. min_local_bsz and max_local_bsz are
// the smallest and largest local_bsz of placements.csv, except yolov3's
// max_local_bsz = 8 (applications.py). A per-GPU batch below min_local_bsz
// is an error.
//
// iterations(b) is the "iteration" column of simulator/traces/<app>/
// validation-<b>.csv at the completion epoch max_epochs − 1 (no application
// sets a target metric), i.e. the iterations the job needs at batch size b
// to make the statistical progress of max_epochs epochs at the smallest
// batch size; between validated batch sizes it is interpolated linearly
// (Application.get_iteration), outside them it is an error. The constants
// (max_epochs from applications.py; iterations by batch size):
//
//	bert        2 epochs   12:14774  24:7427  48:3732  96:1885  192:940  384:480
//	cifar10   100 epochs   128:39062  256:20377  512:10615  1024:5722  2048:3178  4096:2011
//	deepspeech2 80 epochs  20:28536  40:14711  80:7683  160:4041  320:2264  640:1423
//	imagenet   90 epochs   200:576525  400:292995  800:150231  1600:78453  3200:42123  6400:23972  12800:14461
//	ncf        10 epochs   256:194174  512:97094  1024:48625  2048:24308  4096:12172  8192:6122  16384:3069  32768:1548
//	yolov3     50 epochs   8:103444  16:52905  32:27430  64:14577  128:8075  256:4809  512:3143
//
// For example cifar10 on 6 replicas at batch 2048: 342 per GPU, no
// accumulation, step time 0.2688 s (placement "24", between local_bsz 257
// and 363), 3178 iterations: 854.2 s. The durations are those measured on
// Pollux's testbed GPUs, not on the simulator's reference type. Pollux's
// running simulator differs in one detail: a single-replica job above the
// smallest batch size is forced to accumulate at least once; the workload
// generator's estimate, used here, does not. The jobs are rigid
// (min = max = num_replicas): the workload's replicas and batch size are the
// tuned configuration Pollux gives its non-adaptive baselines.
//
// # Errors and limits
//
// Every error is an *Error whose text is "FILE:LINE: what is wrong" (or
// "FILE: what is wrong" when it is about no single line, like an empty
// trace). Rejected: a missing or wrong header, a wrong column count,
// non-numeric or fractional values where integers are expected, NaN and
// infinities, GPU counts below 1 or above 2^20, negative times or
// durations, times above 10^12 s, duplicate IDs, lines longer than 1 MiB,
// and a trace without jobs. Blank lines are skipped anywhere, CRLF line ends
// and a UTF-8 byte order mark are accepted, and spaces around CSV fields are
// trimmed. CSV fields are split at every comma: quoting is not supported
// (no trace uses it). No input makes a reader panic; the fuzz tests check
// this and the invariants above.
//
// The Pollux step-time CSVs are embedded with //go:embed (pollux/<app>/,
// Apache-2.0, see pollux/NOTICE), so reading a Pollux workload needs no
// files besides the workload.
package trace
