# Sourced by the tests that start their own Slurm (tests/slurm/slurm_job.sh, tests/multihost/
# multihost.sh): write_slurm_conf FILE WORK PORT CONTROLLER SPOOL_SUFFIX, then the node and
# partition lines on standard input. It writes the settings both share: munge through a socket in
# WORK, state, pid and log files in WORK (SPOOL_SUFFIX "-%n" gives each slurmd its own when several
# run on one machine), slurmctld on PORT and slurmd on PORT+1, no cgroups and no accounting.
write_slurm_conf() {
  local file=$1 work=$2 port=$3 controller=$4 suffix=$5
  {
    cat <<CONF
ClusterName=scalelabtest
SlurmctldHost=$controller
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool$suffix
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd$suffix.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd$suffix.log
SlurmctldPort=$port
SlurmdPort=$((port + 1))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
CONF
    cat
  } > "$file"
}
