"""What ``whilecli formats`` prints: every format the reader knows, how it is recognised, and
where each canonical field is read from (DESIGN section 1; ``data-real/README.md``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FormatInfo:
    name: str
    tool: str
    detected: str
    fields: dict[str, str]


FORMATS: tuple[FormatInfo, ...] = (
    FormatInfo(
        "vf-eval",
        "verifiers vf-eval (results.jsonl + metadata.json, old and new layouts)",
        "prompt and completion with example_id or id; or a metadata.json with env_id beside",
        {
            "task_id": "example_id, else id",
            "reward": "reward (rewards dict: Σ score × weight)",
            "truncated": "is_truncated, else stop_condition, else not recorded",
            "model": "metadata.json: model",
            "env": "metadata.json: env_id, else env",
        },
    ),
    FormatInfo(
        "verifiers-traces",
        "verifiers v1 traces.jsonl",
        "a task object and a rewards dict",
        {
            "task_id": "task.key",
            "reward": "Σ rewards[].score × weight",
            "truncated": "stop_condition, or the last call's finish_reason == 'length'",
            "model": "agent.config.model, else config.toml: model",
        },
    ),
    FormatInfo(
        "prime-rl",
        "prime-rl run directories: rollouts/step_N/{train,eval}/{all,effective}/traces.jsonl",
        "a run directory (its latest step, or --step N), a step_N folder, or a traces.jsonl"
        " there; or episodes with task, rewards and group",
        {
            "task_id": "task.key (group.id kept as the group)",
            "reward": "Σ rewards[name].score × weight",
            "truncated": "stop_condition, else the last call's finish_reason == 'length'",
            "model": "the run's configs/*.json: model.name, else agent.config.model",
            "version": "run.work.step, else the step folder",
            "logprobs": "traces[].nodes[].logprobs, joined in order (the sampler's)",
            "action_mask": "traces[].nodes[].mask, joined, where every such node has one",
        },
    ),
    FormatInfo(
        "prime-rft",
        "Prime hosted RL sample dumps",
        "problem_id and step with run_id, env_name or sample_id",
        {
            "task_id": "(step, problem_id)",
            "reward": "reward",
            "truncated": "not recorded",
            "model": "metadata.json: run.base_model",
        },
    ),
    FormatInfo(
        "lm-eval",
        "lm-evaluation-harness samples_*.jsonl (+ results_*.json or a renamed results file)",
        "doc_id with filter, resps or filtered_resps",
        {
            "task_id": "doc_id (one filter's rows)",
            "reward": "the first 0/1 metric (the metrics list, else the results file's, else a"
            " numeric key beside doc_id); a continuous metric (bleu_max) is never a pass, nor"
            " one over several samples (pass@k with k > 1, a maj@k filter's vote); with"
            " configs.<task>.repeats k, a per-doc pass@1 is k rollouts, round(pass@1 × k)"
            " passing",
            "truncated": "not recorded",
            "model": "the results file's model_name",
            "env": "the results file's task",
        },
    ),
    FormatInfo(
        "nemo-gym",
        "NeMo Gym rollouts",
        "responses_create_params and response",
        {
            "task_id": "_ng_task_index, else a hash of responses_create_params.input",
            "reward": "reward",
            "truncated": "response.incomplete_details.reason == 'max_output_tokens'",
            "model": "response.model",
        },
    ),
    FormatInfo(
        "nemo-rl",
        "NeMo-RL GRPO training dumps: train_data_step<N>.jsonl",
        "content (a list of message texts) with rewards and input_lengths or generation_logprobs",
        {
            "task_id": "a hash of content before its first reply (through the entry ending in the"
            " generation prompt; else the entries the rows share: provisional)",
            "reward": "rewards (a number)",
            "truncated": "not recorded",
            "model": "not recorded",
            "logprobs": "generation_logprobs",
        },
    ),
    FormatInfo(
        "nemo-skills",
        "NeMo-Skills generation outputs, one output-rs<seed>.jsonl per seed (k across files)",
        "a file named output-rs<N>.jsonl, or generation with symbolic_correct, judge_correct or"
        " is_correct",
        {
            "task_id": "id",
            "reward": "symbolic_correct, else judge_correct, else is_correct",
            "truncated": "not recorded",
            "model": "not recorded",
        },
    ),
    FormatInfo(
        "inspect-ai",
        "inspect_ai logs: .eval (a zip of header.json and samples/) or .json (an EvalLog)",
        "a zip holding header.json, or one JSON object with eval and samples",
        {
            "task_id": "samples[].id (epochs are rollouts)",
            "reward": "the first scorer's value: C = 1, P = 0.5, I = 0, N = 0, numbers and"
            " booleans as they are",
            "truncated": "output stop_reason in {max_tokens, model_length}",
            "model": "header eval.model",
            "env": "header eval.task",
        },
    ),
    FormatInfo(
        "evalscope",
        "EvalScope review rows (2026: sample_score; Jan 2025: chat.completion with a review)",
        "sample_score with index; or object == 'chat.completion' with choices[].review",
        {
            "task_id": "sample_score.group_id (2026: repeats are rollouts), else index; a hash"
            " of raw_input.question (2025)",
            "reward": "sample_score.score.value (acc, else its only value); choices[0].review.result",
            "truncated": "choices[0].finish_reason == 'length' (2025), else not recorded",
            "model": "the report's model_name, else the folder name (2026); model (2025)",
            "env": "the report's dataset_name, else the file name",
        },
    ),
    FormatInfo(
        "atropos",
        "Atropos ScoredDataGroups: one group per row",
        "rows with scores[] beside tokens[] and masks[]",
        {
            "task_id": "the group (seed, else the prompt of messages[i], else the line)",
            "reward": "scores[i], one rollout per element",
            "truncated": "not recorded",
            "model": "not recorded",
        },
    ),
    FormatInfo(
        "art",
        "OpenPipe ART trajectory logs:"
        " .art/<project>/models/<model>/trajectories/<split>/<step>.jsonl, one group per line",
        "lines holding only trajectories[], each with reward and messages_and_choices",
        {
            "task_id": "a hash of the prompt (messages before the first choice)",
            "reward": "trajectories[].reward, one rollout per trajectory",
            "truncated": "the last choice's finish_reason == 'length'",
            "model": "the models/<model>/ folder",
            "version": "the step in the file name",
        },
    ),
    FormatInfo(
        "openai-evals",
        "OpenAI evals run logs: a spec line, then one event per line",
        "a first line holding spec with completion_fns or eval_name",
        {
            "task_id": "sample_id (each graded event is a rollout)",
            "reward": "data.correct of match events, else data.score of metrics events",
            "truncated": "not recorded",
            "model": "spec.completion_fns[0]",
            "env": "spec.eval_name",
        },
    ),
    FormatInfo(
        "harbor",
        "Harbor job folders: one result.json per trial (the job's own result.json is a summary)",
        "a JSON object with trial_name and verifier_result",
        {
            "task_id": "task_name (trials are rollouts)",
            "reward": "verifier_result.rewards.reward (a trial whose exception_info skipped the"
            " verifier: Docker build, environment start, agent setup, verifier timeout: an"
            " error, left out)",
            "truncated": "exception_info.exception_type == AgentTimeoutError (verified all the"
            " same), else not recorded",
            "model": "agent_info.model_info.name",
        },
    ),
    FormatInfo(
        "browsergym",
        "BrowserGym / AgentLab episode folders (WebArena, WorkArena, MiniWoB, ...):"
        " <date>_<agent>_on_<task>_<seed>/summary_info.json, one per episode",
        "a file named summary_info.json holding n_steps, cum_reward, err_msg and stack_trace",
        {
            "task_id": "the task name in the episode folder's name (its seeds are rollouts)",
            "reward": "cum_reward (an episode with err_msg set after the agent acted too, as"
            " AgentLab scores it; one that raised at n_steps 0 or at the model's server: an"
            " error, left out)",
            "truncated": "truncated (the step budget ran out)",
            "model": "the agent name's part after <Agent>- (GenericAgent-<model>)",
        },
    ),
    FormatInfo(
        "osworld",
        "OSWorld result folders: <action_space>/<observation_type>/<model>/<domain>/<example_id>/"
        " with traj.jsonl and result.txt (one example folder per rollout)",
        "a file named traj.jsonl whose lines hold step_num, action and done (or an Error)",
        {
            "task_id": "the example folder (example_id; the same example in k result folders:"
            " k rollouts)",
            "reward": "result.txt beside traj.jsonl; an example with none (the run raised) is"
            " left out with a note",
            "truncated": "the last step's done is false (max_steps ran out)",
            "model": "the <model> folder above <domain>/",
        },
    ),
    FormatInfo(
        "rllm",
        "rLLM episode logs: episodes/<mode>_step_<N>_epoch_<E>/episode_hash<h>_id<task>_<k>.json,"
        " one episode per file",
        "a JSON object with episode_id (or id), is_correct, termination_reason and trajectories",
        {
            "task_id": "episode_id before ':' (episodes of one task are rollouts)",
            "reward": "is_correct",
            "truncated": "termination_reason in {max_response_length_exceeded,"
            " max_turns_exceeded}; max_prompt_length_exceeded and error are harness errors",
            "model": "not recorded",
            "version": "training_step",
        },
    ),
    FormatInfo(
        "swe-bench",
        "SWE-bench harness reports: <model>.<run_id>.json",
        "a JSON object with resolved_ids and submitted_ids or completed_ids",
        {
            "task_id": "each submitted instance id (one rollout each)",
            "reward": "1 for resolved_ids, 0 for unresolved_ids and empty_patch_ids;"
            " incomplete_ids ungraded, error_ids harness errors",
            "truncated": "not recorded",
            "model": "not recorded (the file name names it: pass --model)",
        },
    ),
    FormatInfo(
        "aider",
        "Aider benchmark results: <run>/<language>/exercises/practice/<exercise>/"
        ".aider.results.json, one per exercise",
        "a JSON object with testcase, edit_format and tests_outcomes; or {exception} in a file"
        " named .aider.results.json",
        {
            "task_id": "testdir: <language>/<exercise> (a model's runs are rollouts)",
            "reward": "tests_outcomes[-1] (passed within the run's tries); no outcome: ungraded;"
            " {exception}: a failure, as Aider counts it",
            "truncated": "num_exhausted_context_windows > 0",
            "model": "model",
        },
    ),
    FormatInfo(
        "mle-bench",
        "MLE-bench grading reports: <timestamp>_grading_report.json (mlebench grade)",
        "a JSON object with total_runs and competition_reports[] of competition_id and any_medal",
        {
            "task_id": "competition_reports[].competition_id (its seeds are rollouts)",
            "reward": "any_medal (an invalid or missing submission: no medal, a failure)",
            "truncated": "not recorded",
            "model": "not recorded (pass --model)",
        },
    ),
    FormatInfo(
        "skythought",
        "SkyThought evaluation results: <model>_<task>_<hash>/results.json + summary.json"
        " (skythought evaluate, generate, score)",
        "a JSON object keyed by problem, each holding responses[] beside token_usages or"
        " input_conversation",
        {
            "task_id": "the problem's key (its _index; its responses are rollouts)",
            "reward": "responses[].correctness (null before skythought score: ungraded)",
            "truncated": "token_usages[].completion_tokens >= summary.json"
            " sampling_params.max_tokens (vLLM and Ray backends), else not recorded",
            "model": "summary.json: configuration.model.name",
            "env": "summary.json: configuration.task.name",
        },
    ),
    FormatInfo(
        "matharena",
        "MathArena runs: outputs/<competition>/<solver>/<idx>.json (matharena's Runs)",
        "a JSON object with correct[] (one element per run) beside four or more of the keys"
        " Runs writes with it: idx, answers[], messages[], pass_at_1, N, ...",
        {
            "task_id": "idx (the problem; each run a rollout)",
            "reward": "correct[] (a proof not yet graded: ungraded)",
            "truncated": "not recorded",
            "model": "not recorded (the solver's folder: pass --model)",
        },
    ),
    FormatInfo(
        "hle",
        "Humanity's Last Exam: judged_<predictions>.json (hle_eval/run_judge_results.py)",
        "a JSON object keyed by question id, each value a model's response with the judge's"
        " judge_response",
        {
            "task_id": "the question's key (several judged files of one model are its repeats)",
            "reward": "judge_response.correct == 'yes' (an LLM judge)",
            "truncated": "not recorded",
            "model": "model",
            "env": "hle",
        },
    ),
    FormatInfo(
        "bfcl",
        "Berkeley Function Calling Leaderboard score files:"
        " score/<model>/[<group>/]BFCL_v<N>_<category>_score.json",
        "a first line holding only accuracy, correct_count and total_count",
        {
            "task_id": "id of each failed entry; the passes' ids from the result file beside"
            " (result/<model>/...), else counted",
            "reward": "0 for each failed entry (valid false), 1 for each of correct_count;"
            " an inference_error is the harness's",
            "truncated": "not recorded",
            "model": "model_name, else the score folder (score/<model>/)",
            "env": "the category in the file name",
        },
    ),
    FormatInfo(
        "helm",
        "HELM runs: per_instance_stats.json + run_spec.json",
        "a JSON array of objects with instance_id and stats",
        {
            "task_id": (
                "instance_id (a row: one entry with perturbation null; train trials are"
                " rollouts, perturbed entries are left out and counted)"
            ),
            "reward": "the stats entry named exact_match without a perturbation",
            "truncated": "finish_reason_length, only where run_spec allows more than 8 tokens",
            "model": "run_spec.json: adapter_spec.model",
            "env": "run_spec.json: name, without its model",
        },
    ),
    FormatInfo(
        "tau-bench",
        "tau-bench results: one JSON array of trajectories",
        "a JSON array of objects with task_id, reward, traj and trial",
        {
            "task_id": "task_id (trials are rollouts)",
            "reward": "reward",
            "truncated": "not recorded",
            "model": "not recorded (the file name may say it: pass --model to check 6)",
        },
    ),
    FormatInfo(
        "tau2-bench",
        "tau2-bench Results: one JSON document {timestamp, info, tasks, simulations}, or"
        " results.json + simulations/<id>.json (the dir format)",
        "an object with info.agent_info, tasks and simulations or simulation_index; or one"
        " simulation with task_id, termination_reason and reward_info",
        {
            "task_id": "simulations[].task_id (trials are rollouts)",
            "reward": "simulations[].reward_info.reward",
            "truncated": "termination_reason in {max_steps, timeout}; infrastructure_error and"
            " context_window_exceeded are harness errors",
            "model": "info.agent_info.llm",
            "env": "info.environment_info.domain_name",
        },
    ),
    FormatInfo(
        "alpaca-eval",
        "AlpacaEval annotations: <outputs>/<annotator>/annotations.json",
        "a JSON array of objects with output_1, output_2 and preference",
        {
            "task_id": "a hash of instruction",
            "reward": "preference - 1 (the judge prefers output_2, the model's: 1; a tie 0.5)",
            "truncated": "not recorded",
            "model": "generator_2",
        },
    ),
    FormatInfo(
        "open-instruct",
        "open-instruct GRPO traces: traces_<run>.jsonl (--save_traces), one line per step",
        "a line with training_step and lists scores[] and finish_reasons[]",
        {
            "task_id": "(training_step, indices[i]), else a hash of raw_queries[i] or queries[i]",
            "reward": "scores[i], one rollout per element (10 per correct answer by default:"
            " pass --pass-threshold)",
            "truncated": "finish_reasons[i] == 'length'",
            "model": "not recorded",
            "version": "training_step",
        },
    ),
    FormatInfo(
        "verl",
        "verl rollout and validation dumps: {step}.jsonl under trainer.rollout_data_dir or"
        " validation_data_dir",
        "lines with input and output text, score and an integer step",
        {
            "task_id": "(step, a hash of input): no id is written",
            "reward": "acc where every row carries it (verl's core metric), else score",
            "truncated": "not recorded",
            "model": "not recorded",
            "version": "step",
        },
    ),
    FormatInfo(
        "fastchat",
        "FastChat LLM-judge (MT-Bench) judgments: model_judgment/<judge>_single.jsonl",
        "lines with question_id, model, score, turn and a [judge model, prompt] judge",
        {
            "task_id": "(question_id, turn): each turn of a question is a task",
            "reward": "score (the judge's rating, 1 to 10: pass --pass-threshold); -1 ungraded",
            "truncated": "not recorded",
            "model": "model (one file holds every judged model: --by model)",
        },
    ),
    FormatInfo(
        "livebench",
        "LiveBench ground-truth judgments:"
        " data/live_bench/<category>/<task>/model_judgment/ground_truth_judgment.jsonl",
        "lines with question_id, task, model, score, turn, tstamp and category, no judge",
        {
            "task_id": "question_id (each model answered once)",
            "reward": "score (partial credit on some tasks: pass --pass-threshold)",
            "truncated": "not recorded",
            "model": "model (one file holds every scored model: --by model)",
            "env": "task",
        },
    ),
    FormatInfo(
        "arena-hard",
        "Arena-Hard-Auto judgments: model_judgment/<judge>/<model>.jsonl",
        "lines with question_id or uid, model, a judge name and games[] of verdict labels",
        {
            "task_id": "question_id (uid in the v2 layout)",
            "reward": "the model's share of its games against the baseline: win 1, tie 0.5,"
            " loss 0 (game 2 swaps the positions); no verdict in any game: ungraded",
            "truncated": "not recorded",
            "model": "model",
        },
    ),
    FormatInfo(
        "lighteval",
        "lighteval details: details/<model>/<date>/details_<task>_<date>.parquet (0.10+: doc,"
        " model_response, metric; before: example, predictions, metrics)",
        "doc.query with model_response and metric; or metrics and predictions with example or"
        " full_prompt",
        {
            "task_id": "doc.id, else the query (doc.query, else example)",
            "reward": "a metric that is the mean of n samples (math_pass@1:4_samples,"
            " pass@k:k=1&n=4): n rollouts, round(metric × n) passing; else the first 0/1"
            " metric of metric (metrics before 0.10)",
            "truncated": "not recorded (the truncation counts are the prompt's)",
            "model": "results/<model>/results_<date>.json: config_general.model_name",
            "env": "the task the file is named by (suite|task|fewshot)",
        },
    ),
    FormatInfo(
        "skyrl",
        "SkyRL evaluation dumps: dumped_evals/<step>_evals/<data_source>.jsonl",
        "input_prompt, output_response and score with env_class or data_source",
        {
            "task_id": "a hash of input_prompt (a prompt's samples are its rollouts)",
            "reward": "score (token-level rewards: their sum)",
            "truncated": "stop_reason == 'length'",
            "model": "not recorded",
            "env": "the data source the file is named by",
        },
    ),
    FormatInfo(
        "openai-eval-runs",
        "OpenAI Evals API run output items: one eval.run.output_item a line, or a listing's"
        " page (data[])",
        "objects eval.run.output_item, or datasource_item_id with results, sample and status",
        {
            "task_id": "datasource_item_id (the items of each run are rollouts)",
            "reward": "status == 'pass' (every grader passed)",
            "truncated": "sample.finish_reason == 'length'",
            "model": "sample.model",
            "env": "eval_id",
        },
    ),
    FormatInfo(
        "anthropic-batch",
        "Anthropic Message Batches results (GET .../batches/{id}/results: one"
        " MessageBatchIndividualResponse a line), with each reply's grade written beside",
        "lines with a custom_id and a result whose type is succeeded, errored, canceled or expired",
        {
            "task_id": "a task_id written beside custom_id, else custom_id (the same custom_id"
            " in k batches' results: k rollouts)",
            "reward": "a grade written beside custom_id (reward, score, correct, ...): the API"
            " writes none, and a file without one is refused; another key: --map reward=KEY",
            "truncated": "result.message.stop_reason == 'max_tokens'; errored, canceled and"
            " expired requests are harness errors",
            "model": "result.message.model",
        },
    ),
    FormatInfo(
        "openai-batch",
        "OpenAI Batch API output (the batch's output_file_id content: one BatchRequestOutput a"
        " line), with each reply's grade written beside",
        "lines with a custom_id beside a response holding status_code and body (or beside a"
        " null response and an error)",
        {
            "task_id": "a task_id written beside custom_id, else custom_id (the same custom_id"
            " in k batches' output: k rollouts)",
            "reward": "a grade written beside custom_id (reward, score, correct, ...): the API"
            " writes none, and a file without one is refused; another key: --map reward=KEY",
            "truncated": "response.body.choices[0].finish_reason == 'length' (chat"
            " completions), status 'incomplete' for max_output_tokens (Responses API); an"
            " error, a status_code of 400 or more and a failed response are harness errors",
            "model": "response.body.model",
        },
    ),
    FormatInfo(
        "vertex-batch",
        "Vertex AI batch prediction output for Gemini (the job's predictions.jsonl: status,"
        " request and response a line) and Gemini API batch results (key and response a"
        " line), with each reply's grade written beside",
        "lines with a request holding contents beside a response holding candidates (or"
        " beside a status holding an error); or a key beside such a response or an error",
        {
            "task_id": "a task_id written beside the request, else the request's text (the"
            " same prompt in k jobs' output: k rollouts), else the Gemini API's key",
            "reward": "a grade written beside the request (reward, score, correct, ...): the"
            " job writes none, and a file without one is refused; another key: --map"
            " reward=KEY",
            "truncated": "response.candidates[0].finishReason == 'MAX_TOKENS'; an error in"
            " status and a blocked prompt are harness errors",
            "model": "response.modelVersion",
        },
    ),
    FormatInfo(
        "bedrock-batch",
        "Amazon Bedrock batch inference output (the job's <input>.jsonl.out: recordId,"
        " modelInput and modelOutput a line), with each reply's grade written beside",
        "lines with a modelInput object beside a modelOutput object (or beside an error)",
        {
            "task_id": "a task_id written beside the record, else the request's text (the same"
            " prompt in one job or k jobs' output: k rollouts)",
            "reward": "a grade written beside recordId (reward, score, correct, ...): the job"
            " writes none, and a file without one is refused; another key: --map reward=KEY",
            "truncated": "the body's end reason: stop_reason 'max_tokens' (Anthropic),"
            " stopReason 'max_tokens' (Nova, Converse), stop_reason 'length' (Llama, Mistral),"
            " completionReason 'LENGTH' (Titan); an error in place of modelOutput is a"
            " harness error",
            "model": "modelOutput.model (Anthropic bodies); other bodies name none",
        },
    ),
    FormatInfo(
        "tinker",
        "Tinker cookbook rollout summaries: iteration_<N>/<base>_rollout_summaries.jsonl",
        "lines with group_idx, traj_idx and total_reward or final_reward",
        {
            "task_id": "(split, iteration, group_idx): a group's trajectories are rollouts",
            "reward": "the environment's correct metric (trajectory_metrics, else the last"
            " step's), else total_reward",
            "truncated": "the last step's stop_reason == 'length'",
            "model": "the run's config.json: model_name",
            "version": "sampling_client_step",
        },
    ),
    FormatInfo(
        "slime",
        "slime rollout dumps: --save-debug-rollout-data rollout_data_{rollout_id}.pt (torch.save)",
        "a torch.save zip holding {rollout_id, samples: [Sample.to_dict()]}, read as plain data",
        {
            "task_id": "samples[].group_index (a prompt's samples share it)",
            "reward": "samples[].reward (a dict's one number; else --map reward=reward.KEY)",
            "truncated": "samples[].status == 'truncated'; 'aborted' and 'failed' are error"
            " replies",
            "model": "not recorded",
            "version": "samples[].weight_versions[0], else rollout_id",
            "logprobs": "samples[].rollout_log_probs",
        },
    ),
    FormatInfo(
        "openrlhf",
        "OpenRLHF eval samples: eval_samples_step_<N>.jsonl under eval_sample_save_path, else"
        " ckpt_path/eval (the first 128 of an evaluation)",
        "lines with prompt, label, reward, score, truncated, datasource and eval_index",
        {
            "task_id": "(the file name's step, a hash of prompt): no id is written",
            "reward": "reward (the reward function's), else score where no line has a reward",
            "truncated": "truncated, where the trainer recorded it (else null: not recorded)",
            "model": "not recorded",
            "version": "the step in the file name",
        },
    ),
    FormatInfo(
        "areal",
        "AReaL rollout dumps (rollout.dump_to_file): <log>/rollout/<version>/<task_id>.jsonl,"
        " eval-rollout/ for evaluation (two evaluations: refused pooled, --by split)",
        "lines with task_id, sample_idx, head_version, tail_version, reward, prompt and completion",
        {
            "task_id": "task_id (a rollout task's samples), within its rollout or eval-rollout"
            " folder",
            "reward": "original_reward where every line has one, else reward",
            "truncated": "not recorded",
            "model": "not recorded",
            "version": "tail_version",
        },
    ),
    FormatInfo(
        "roll",
        "ROLL RLVR rollout dumps (rollout_dump_dir): rollout_dump_data.step_<N>.jsonl, one"
        " object of columns a step",
        "an object whose global_step is a list, beside lists scores or responses",
        {
            "task_id": "(global_step[i], domain[i], id[i]), else a hash of prompt[i] or"
            " messages[i]",
            "reward": "scores[i], one rollout per element (ROLL counts scores == 1 correct)",
            "truncated": "not recorded",
            "model": "not recorded",
            "version": "global_step[i]",
        },
    ),
    FormatInfo(
        "promptfoo",
        "promptfoo eval outputs: -o out.json (results.results[]) or -o out.jsonl",
        "results with testIdx, success and promptIdx or gradingResult",
        {
            "task_id": "testIdx (--repeat: rollouts), within the prompt's label when several",
            "reward": "success (every assertion passed); score is a weighted mean, never a pass",
            "truncated": "response.finishReason == 'length', else not recorded",
            "model": "provider.id",
        },
    ),
    FormatInfo(
        "deepeval",
        "DeepEval test runs: .deepeval/.latest_test_run.json or test_run_<time>.json",
        "a JSON object with testCases[] and testFile, testPassed or conversationalTestCases",
        {
            "task_id": "name (test cases of one input are one task)",
            "reward": "success (every metric passed); metricsData[].score is never a pass",
            "truncated": "not recorded",
            "model": "hyperparameters.model, else not recorded",
        },
    ),
    FormatInfo(
        "braintrust",
        "Braintrust experiment events: init_experiment(...).fetch() dumped as JSON Lines or an"
        " array, or the REST /v1/experiment/{id}/fetch answer ({events: [...]})",
        "events with span_id and root_span_id beside scores, experiment_id or span_attributes",
        {
            "task_id": "dataset_record_id, else origin.id (trials are rollouts), else a hash of"
            " input; one row per trace",
            "reward": "the one score of scores (the root's, else its score spans'), else the only"
            " 0/1 one; several: --map reward=scores.NAME",
            "truncated": "the task's llm span output finish_reason == 'length', else not recorded",
            "model": "metadata.model, else the task's llm span metadata.model",
        },
    ),
    FormatInfo(
        "langfuse",
        "Langfuse traces or observations table exports (the export button's JSON or JSONL: a"
        " row per trace or observation, one column per score name)",
        "rows with id, timestamp, name, input, output, bookmarked and public beside"
        " observationCount, latency, comments or usage; or with id, traceId, type, startTime,"
        " input and output beside providedModelName, modelParameters or usageDetails",
        {
            "task_id": "a hash of input (the export names no dataset item: the same input in k"
            " traces is k rollouts)",
            "reward": "the one score column (its values averaged), else the only 0/1 one;"
            " several: --map reward=scores.NAME; no score column: refused (scores exported"
            " apart name no input)",
            "truncated": "not recorded",
            "model": "an observation's model, else not recorded",
        },
    ),
    FormatInfo(
        "langsmith",
        "LangSmith experiments: list_runs() dumped as JSON Lines or an array, or evaluate()"
        " results' to_pandas() written as CSV, Parquet or JSON",
        "runs with run_type, inputs or outputs and trace_id or reference_example_id; or rows"
        " with example_id beside inputs.*, outputs.* or feedback.* columns",
        {
            "task_id": "reference_example_id (example_id in the table; repetitions are"
            " rollouts), else a hash of inputs; one row per root run",
            "reward": "the one feedback key (feedback_stats.KEY.avg, feedback.KEY), else the only"
            " 0/1 one; several: --map reward=feedback.KEY",
            "truncated": "an llm run's outputs finish_reason == 'length', else not recorded",
            "model": "extra.metadata.ls_model_name (the root's, else its llm runs'); the table"
            " records none",
        },
    ),
    FormatInfo(
        "evalchemy",
        "Evalchemy results_<date>.json: results[TASK].examples[] beside the metrics",
        "a JSON object whose results hold a task with an examples list",
        {
            "task_id": "each example (its id, else its place), within its benchmark",
            "reward": "score[r], one rollout per repetition (JEEBench); else correctness (the"
            " last repetition's, code benchmarks); math examples hold no grade: refused",
            "truncated": "not recorded",
            "model": "model_name, else config.model_args pretrained=",
        },
    ),
    FormatInfo(
        "opik",
        "Opik experiment exports (opik export WORKSPACE experiment NAME):"
        " <workspace>/experiments/experiment_<name>_<id>.json",
        "a JSON object with experiment (id, name) and items[] naming dataset_item_id or trace_id",
        {
            "task_id": "items[].dataset_item_id (trial_count runs of an item are rollouts)",
            "reward": "the one feedback score, else the only 0/1 one (hallucination_metric and"
            " moderation_metric score a fault: never the grade); several: --map"
            " reward=scores.NAME",
            "truncated": "not recorded",
            "model": "experiment.metadata.model, else the llm spans' model in the trace files"
            " exported beside it (projects/<project>/trace_<id>.json)",
            "env": "experiment.dataset_name",
        },
    ),
    FormatInfo(
        "phoenix",
        "Arize Phoenix experiment runs: GET /v1/experiments/{id}/json (Download experiment runs"
        " as a JSON file), saved as <experiment>.json, or /csv (<experiment>.csv)",
        "a JSON array of objects with example_id, repetition_number and annotations[]; or CSV"
        " with example_id, repetition_number, reference_output and output columns",
        {
            "task_id": "example_id (its repetitions are rollouts)",
            "reward": "the one evaluator's annotations[].score (CSV: annotation_<name>_score),"
            " else the only 0/1 one; several: --map reward=scores.NAME; labels alone: --map"
            " reward=labels.NAME; a task that raised (error) is a harness error",
            "truncated": "not recorded",
            "model": "not recorded (pass --model)",
        },
    ),
    FormatInfo(
        "weave",
        "W&B Weave evaluation results: the answer of POST /v2/{entity}/{project}/eval_results/query"
        " (v2 Evaluation REST API), saved as one JSON document",
        "a JSON object whose rows[] hold row_digest and evaluations[] of trials[]",
        {
            "task_id": "rows[].row_digest (its trials are rollouts)",
            "reward": "the one scorer output in trials[].scores (an object's values: SCORER.KEY),"
            " else the only 0/1 one; several: --map reward=scores.NAME",
            "truncated": "not recorded",
            "model": "summary.evaluations[].model_ref of the trial's evaluation (several: --by"
            " model)",
            "env": "summary.evaluations[].evaluation_ref",
        },
    ),
    FormatInfo(
        "json",
        "one JSON document of rows: an array of objects, an object with a samples list, or"
        " rows kept under their task ids (OpenCompass results/<model>/<dataset>.json details,"
        " keyed or a list of example_abbr entries with a verdict per run in correct, one row"
        " per run, the model its folder's name; EvalPlus and BigCodeBench eval:"
        " base_status and plus_status, or status, == 'pass' the grade; LiveCodeBench"
        " output/<model>/<scenario>_<n>_<T>_eval_all.json: graded_list, the model its folder's"
        " name; a columns/data table, MLflow's eval_results_table.json: the one <metric>/score"
        " column that is 0/1 the grade). In a folder, a tool's graded file supersedes the"
        " ungraded generations it writes beside it (OpenHands, LiveCodeBench, EvalPlus,"
        " AlpacaEval, tau2-bench's dir format)",
        "a file whose content is one JSON value rather than one object per line",
        {"*": "as for JSON Lines rows (the alias table)"},
    ),
    FormatInfo(
        "csv",
        "CSV or TSV rows with a header",
        "the .csv or .tsv suffix",
        {"*": "as for JSON Lines rows (the alias table); dotted names are not nested"},
    ),
    FormatInfo(
        "vlmevalkit",
        "VLMEvalKit result tables: outputs/<model>/<eval id>/<model>_<dataset>_<judge>_result.tsv"
        " or .csv (PRED_FORMAT=tsv; Excel is not read)",
        "CSV or TSV rows with index, prediction and hit",
        {
            "task_id": "index (one reply per item), within the dataset the file names",
            "reward": "hit",
            "truncated": "not recorded",
            "model": "the outputs/<model>/ folder the file's name begins with",
            "env": "the file's name: dataset and judge",
        },
    ),
    FormatInfo(
        "trl",
        "TRL completion tables (completions/completions_<step>.parquet, or GRPO's W&B"
        " completions table saved as a .table.json: columns and data)",
        "prompt, completion and step, no task id column",
        {
            "task_id": "(step, a hash of prompt)",
            "reward": "Σ reward function columns, weights taken as 1 (a null in any: no grade)",
            "truncated": "not recorded",
            "model": "not recorded",
        },
    ),
    FormatInfo(
        "whileai",
        "the reference SDK's rows",
        "scenario_id, model_version or token_logprobs",
        {
            "task_id": "scenario_id",
            "reward": "reward",
            "truncated": "truncated",
            "model": "model_version",
        },
    ),
    FormatInfo(
        "jsonl",
        "any other JSON Lines rows",
        "one JSON object per line",
        {"*": "the alias table (`whilecli formats --aliases`)"},
    ),
    FormatInfo(
        "parquet",
        "any other Parquet rows",
        "the PAR1 magic",
        {"*": "the alias table (`whilecli formats --aliases`)"},
    ),
    FormatInfo(
        "hf-datasets",
        "Hugging Face datasets save_to_disk folders: data-<i>-of-<n>.arrow shards beside"
        " state.json and dataset_info.json (dataset_dict.json above a DatasetDict's splits)",
        "an .arrow file (an Arrow IPC stream) whose schema carries the huggingface metadata,"
        " or that the state.json beside it names",
        {"*": "the alias table, as for Parquet rows (`whilecli formats --aliases`)"},
    ),
)


#: The names ``while formats`` prints and ``--input-format`` takes: one list.
NAMES: tuple[str, ...] = tuple(f.name for f in FORMATS)
#: Formats converted to rows in memory (:mod:`whilecli.io.formats.document`); the others are
#: read by the streaming reader under the plan of :mod:`whilecli.io.plan`.
CONVERTED = frozenset(
    {"prime-rl", "inspect-ai", "evalscope", "atropos", "helm", "tau-bench", "json", "csv"}
    | {"tau2-bench", "alpaca-eval"}
    | {"openai-evals", "harbor", "swe-bench", "open-instruct", "promptfoo", "deepeval", "tinker"}
    | {"evalchemy", "verl", "fastchat", "arena-hard", "openai-eval-runs", "slime"}
    | {"braintrust", "langsmith"}
    | {"openrlhf", "areal", "roll", "bfcl"}
    | {"rllm", "art", "vlmevalkit", "livebench"}
    | {"aider", "mle-bench", "hf-datasets"}
    | {"skythought", "opik", "anthropic-batch", "openai-batch", "vertex-batch", "phoenix", "weave"}
    | {"bedrock-batch", "langfuse", "osworld", "browsergym", "hle", "matharena"}
)
