"""A CleanRL-style PPO update on a toy environment written in NumPy: an actor-critic with
layer_init (constant_ biases), a Categorical head (discrete) and a Normal head with a learned
log-std (continuous), actions drawn from NumPy by inverse CDF and scored with log_prob and
entropy, GAE computed backwards over torch tensors, minibatches from NumPy permutations,
normalized advantages, clipped ratio and clipped value losses, approx-KL and clip fraction,
kl_divergence between old and new policies, Adam(eps=1e-5) with its lr annealed by hand,
clip_grad_norm_, and explained variance."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical, Normal
from torch.distributions.kl import kl_divergence
from common_init import det_init

def layer_init(layer, bias_const=0.0):
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer

class Agent(nn.Module):
    def __init__(self, obs_dim, n_actions, act_dim):
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(obs_dim, 32)), nn.Tanh(),
                                    layer_init(nn.Linear(32, 1), 1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(obs_dim, 32)), nn.Tanh(),
                                   layer_init(nn.Linear(32, n_actions), 0.01))
        self.actor_mean = nn.Sequential(layer_init(nn.Linear(obs_dim, 32)), nn.Tanh(),
                                        layer_init(nn.Linear(32, act_dim)))
        self.actor_logstd = nn.Parameter(torch.zeros(1, act_dim))
    def get_value(self, x):
        return self.critic(x)
    def get_action_and_value(self, x, action=None, caction=None, u=None):
        logits = self.actor(x)
        probs = Categorical(logits=logits)
        mean = self.actor_mean(x)
        std = self.actor_logstd.expand_as(mean).exp()
        normal = Normal(mean, std)
        if action is None:
            cdf = probs.probs.cumsum(-1)
            action = (cdf < torch.from_numpy(u[0])[:, None]).sum(-1).clamp(max=logits.shape[-1] - 1)
            caction = mean + std * torch.from_numpy(u[1])
        return (action, caction, probs.log_prob(action) + normal.log_prob(caction).sum(1),
                probs.entropy() + normal.entropy().sum(1), self.critic(x), probs, normal)

rs = np.random.RandomState(0)
num_envs, num_steps, obs_dim = 4, 16, 3
agent = Agent(obs_dim, 3, 2); det_init(agent, 0, 0.3)
optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-3, eps=1e-5)
gamma, gae_lambda, clip_coef, ent_coef, vf_coef = 0.99, 0.95, 0.2, 0.01, 0.5
num_updates, update_epochs, minibatch = 3, 2, 16
state = rs.randn(num_envs, obs_dim).astype("float32")

for update in range(1, num_updates + 1):
    frac = 1.0 - (update - 1.0) / num_updates
    optimizer.param_groups[0]["lr"] = frac * 2.5e-3
    obs = torch.zeros((num_steps, num_envs, obs_dim))
    actions = torch.zeros((num_steps, num_envs), dtype=torch.long)
    cactions = torch.zeros((num_steps, num_envs, 2))
    logprobs = torch.zeros((num_steps, num_envs))
    rewards = torch.zeros((num_steps, num_envs))
    dones = torch.zeros((num_steps, num_envs))
    values = torch.zeros((num_steps, num_envs))
    for step in range(num_steps):
        obs[step] = torch.as_tensor(state)
        with torch.no_grad():
            u = (rs.rand(num_envs).astype("float32"), rs.randn(num_envs, 2).astype("float32"))
            a, ca, logp, _, value, _, _ = agent.get_action_and_value(obs[step], u=u)
            values[step] = value.flatten()
        actions[step], cactions[step], logprobs[step] = a, ca, logp
        reward = -np.abs(state[:, 0] - (a.numpy() - 1)) - 0.1 * (ca.numpy() ** 2).sum(1)
        state = (0.9 * state + 0.1 * rs.randn(num_envs, obs_dim)).astype("float32")
        done = (rs.rand(num_envs) < 0.1).astype("float32")
        rewards[step] = torch.tensor(reward, dtype=torch.float32).view(-1)
        dones[step] = torch.from_numpy(done)
    with torch.no_grad():
        next_value = agent.get_value(torch.as_tensor(state)).reshape(1, -1)
        advantages = torch.zeros_like(rewards)
        lastgaelam = 0
        for t in reversed(range(num_steps)):
            nextvalues = next_value if t == num_steps - 1 else values[t + 1]
            nextnonterminal = 1.0 - dones[t]
            delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
            advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
        returns = advantages + values
    b_obs, b_logprobs = obs.reshape((-1, obs_dim)), logprobs.reshape(-1)
    b_actions, b_cactions = actions.reshape(-1), cactions.reshape((-1, 2))
    b_advantages, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
    with torch.no_grad():
        old = agent.get_action_and_value(b_obs, b_actions, b_cactions)
    clipfracs = []
    b_inds = np.arange(num_steps * num_envs)
    for epoch in range(update_epochs):
        rs.shuffle(b_inds)
        for start in range(0, len(b_inds), minibatch):
            mb = torch.from_numpy(b_inds[start:start + minibatch])
            _, _, newlogprob, entropy, newvalue, _, _ = agent.get_action_and_value(
                b_obs[mb], b_actions[mb], b_cactions[mb])
            logratio = newlogprob - b_logprobs[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs += [((ratio - 1.0).abs() > clip_coef).float().mean().item()]
            mb_adv = b_advantages[mb]
            mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss1 = -mb_adv * ratio
            pg_loss2 = -mb_adv * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()
            newvalue = newvalue.view(-1)
            v_loss_unclipped = (newvalue - b_returns[mb]) ** 2
            v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -clip_coef, clip_coef)
            v_loss = 0.5 * torch.max(v_loss_unclipped, (v_clipped - b_returns[mb]) ** 2).mean()
            loss = pg_loss - ent_coef * entropy.mean() + v_loss * vf_coef
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
            optimizer.step()
    with torch.no_grad():
        new = agent.get_action_and_value(b_obs, b_actions, b_cactions)
        kl = (kl_divergence(old[5], new[5]) + kl_divergence(old[6], new[6]).sum(-1)).mean()
    y_pred, y_true = b_values.numpy(), b_returns.numpy()
    var_y = np.var(y_true)
    explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
    print("update", update, "%.6f %.6f %.6f %.6f" % (pg_loss.item(), v_loss.item(),
                                                     entropy.mean().item(), approx_kl.item()),
          "%.4f %.6f %.5f %.6f" % (np.mean(clipfracs), kl.item(), explained_var,
                                   rewards.sum().item()))
