// The mount namespace of a job: the host's tree, read-only, with the job's work dir bound
// read-write at kJobDirInside (under an empty tmpfs /tmp), a fresh /proc that shows only the job's
// own pid namespace, and an empty read-only tmpfs over every hidden path (other jobs' work dirs,
// lock files, /var/tmp, /dev/shm, /run, homes...). Nothing the job writes outside its work dir can
// exist; nothing of its work dir survives it (the host removes it).
#pragma once

namespace plotq::sandbox {

struct ConfineSpec;

// True when an empty tmpfs over `path` would cover the job's own dir (kJobDirInside or one of its
// parents: "/tmp", "/"): such a hidden path is skipped, /tmp being an empty tmpfs already. A
// sweep hides its database's dir, which may well be /tmp. Fork-safe.
bool covers_job_dir(const char* path);

// Needs a private mount namespace (CLONE_NEWNS) and CAP_SYS_ADMIN in its owning user namespace.
// Fork-safe: no allocation. 0, or -errno with *stage naming the step.
int setup_job_mounts(const ConfineSpec& spec, const char** stage);

}  // namespace plotq::sandbox
