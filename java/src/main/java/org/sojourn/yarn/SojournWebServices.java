package org.sojourn.yarn;

import com.google.inject.Inject;
import com.google.inject.Singleton;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;

/**
 * REST: {@code GET /ws/v1/cluster/scheduler} for Sojourn ({@link SchedulerView}
 * as JSON). Hadoop's own answer there (RMWebServices.getSchedulerInfo) knows
 * only CapacityScheduler, FairScheduler and FifoScheduler and is a 404 for any
 * other scheduler class; it cannot be extended. This resource is added to the
 * RM's web app with {@code yarn.http.rmwebapp.external.classes =
 * org.sojourn.yarn.SojournWebServices} (RMWebApp binds the listed classes into
 * its Jersey container), and Jersey routes a request to the root resource with
 * the longest literal path, so {@code /ws/v1/cluster/scheduler} comes here while
 * every other {@code /ws/v1/cluster/...} path stays RMWebServices'. The same
 * answer is at {@code /ws/v1/cluster/scheduler/sojourn}.
 */
@Singleton
@Path("/ws/v1/cluster/scheduler")
public class SojournWebServices {
  private final ResourceManager rm;

  @Inject
  public SojournWebServices(ResourceManager rm) {
    this.rm = rm;
  }

  @GET
  @Produces(MediaType.APPLICATION_JSON + "; charset=utf-8")
  public Response scheduler() {
    ResourceScheduler s = rm.getResourceScheduler();
    if (!(s instanceof SojournScheduler)) {
      return Response.status(Response.Status.NOT_FOUND).type(MediaType.TEXT_PLAIN)
          .entity("the scheduler is " + s.getClass().getName() + ", not Sojourn\n").build();
    }
    try {
      return Response.ok(SchedulerView.build((SojournScheduler) s).toString()).build();
    } catch (RuntimeException e) {
      // A web request must not take the RM down; the reason goes to the caller.
      return Response.serverError().type(MediaType.TEXT_PLAIN).entity("sojourn: " + e + "\n").build();
    }
  }

  @GET
  @Path("sojourn")
  @Produces(MediaType.APPLICATION_JSON + "; charset=utf-8")
  public Response sojourn() {
    return scheduler();
  }
}
