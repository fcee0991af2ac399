--[[
  write-crawl-job (include): writes one crawl job into BullMQ from inside
  another script, so a URL can leave the frontier's backlog and become a job
  in one atomic step (never both, never neither). It runs BullMQ's own
  addPrioritizedJob script as a function, with the arguments `Queue.add` would
  pass for a prioritized job with a custom id: the job hash, events, priority
  counter and worker marker are BullMQ's own writes, not a copy of them.
  test/write-job.test.ts checks the result against `Queue.add`, so a BullMQ
  upgrade that changes the contract fails there.

  Defines write_crawl_job(queue_keys, job_prefix, id, data_json, opts_json,
  priority, timestamp): queue_keys are the 9 keys of crawlJobWriteKeys (the
  KEYS of BullMQ's addPrioritizedJob: marker, meta, id, prioritized, delayed,
  completed, active, events, pc), opts_json the job options without priority
  (crawlJobOptionsJson). 'fetch' is the job name (CRAWL_JOB_NAME).
  Returns the job id, or the existing job's id when one with that id exists
  (BullMQ's duplicate handling: nothing is written then).
]]
--- @include "bullmq-add-prioritized-job.lua"
local function write_crawl_job(queue_keys, job_prefix, id, data_json, opts_json, priority, timestamp)
  local opts = cjson.decode(opts_json)
  opts.priority = priority
  opts.jobId = id
  local args = cmsgpack.pack({job_prefix, id, 'fetch', timestamp})
  return bullmq_add_prioritized(queue_keys, {args, data_json, cmsgpack.pack(opts)})
end
