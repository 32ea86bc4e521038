# Writes a job trace in Gavel's format with Gavel's own job generator
# (scheduler/utils.py, generate_job: Philly-distributed durations, scale
# factors 1/2/4/8, job types from Gavel's JobTable), the way Gavel's simulator
# generates jobs when it runs without a trace (scheduler.py, simulate: the
# job generator seeded with SEED+2, Poisson inter-arrival times with mean LAM
# seconds from a generator seeded with SEED+3, the first job at time 0).
#
# Run through the peer's runner environment: scripts/fidelity/gavel-gentrace.
#   gentrace.py N LAM SEED OUT
import math, os, random, sys

sys.path.insert(0, os.getcwd())  # Gavel's scheduler/ folder
import utils  # noqa: E402

def main():
    n, lam, seed, out = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    throughputs = utils.read_all_throughputs_json_v2('simulation_throughputs.json')
    job_rng = random.Random()
    job_rng.seed(seed + 2)
    arrival_rng = random.Random()
    arrival_rng.seed(seed + 3)
    t = 0.0
    with open(out, 'w') as f:
        for i in range(n):
            job = utils.generate_job(throughputs=throughputs, reference_worker_type='v100',
                                     rng=job_rng, job_id=None, fixed_job_duration=None,
                                     generate_multi_gpu_jobs=True,
                                     generate_multi_priority_jobs=False, SLO_rng=None)
            if i > 0:
                t += -math.log(1.0 - arrival_rng.random()) * lam
            f.write('%s\t%d\n' % (str(job), int(t)))

main()
