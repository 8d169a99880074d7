"""whilecli's methods inside the trainers people use (DESIGN section 3, "Trainers").

- :mod:`whilecli.trainers.verl`: advantage estimators and policy losses registered with verl
  (``algorithm.adv_estimator``, ``actor_rollout_ref.actor.policy_loss.loss_mode``, loaded with
  ``VERL_USE_EXTERNAL_MODULES=whilecli.trainers.verl``).
- :mod:`whilecli.trainers.trl`: a TRL ``GRPOTrainer`` that trains FlashReinforce on one
  completion per prompt.
- prime-rl's custom losses live in :mod:`whilecli.emit.losses` (the corrections).

Each module imports its trainer; importing this package imports nothing.
"""
